package cloudstack_test

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The layer's requests, read from its type-checked source: every command
// it sends and every parameter it gives each, whichever way it gives it.
// cloudstack-go's typed requests name their command in their type
// (DeployVirtualMachineParams) and their parameters in their setters and
// constructors, whose keys cloudstack-go's own source names; a setter
// called through an interface (inProject's SetProjectid) counts for every
// request type passed as that interface. CustomRequest's parameters are
// the names given to SetParam on the request's variable, followed into
// the helpers it is passed to, and a name held in a variable or a map's
// keys is followed back to the constants assigned to it, through the
// calls that pass it. A name it cannot follow fails the test.

const csgoPath = "github.com/apache/cloudstack-go/v2/cloudstack"

// sent is command → parameter → true.
type sent map[string]map[string]bool

type callSite struct {
	call *ast.CallExpr
	in   *ast.FuncDecl
}

type layer struct {
	t      *testing.T
	fset   *token.FileSet
	info   *types.Info
	decls  map[types.Object]*ast.FuncDecl
	calls  map[types.Object][]callSite // a package function's call sites
	client *clientSource
	out    sent
}

// sentRequests analyses the package in the working directory.
func sentRequests(t *testing.T) sent {
	t.Helper()
	l := loadLayer(t)
	for _, d := range l.decls {
		ast.Inspect(d, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				l.request(call, d)
			}
			return true
		})
	}
	return l.out
}

// loadLayer type-checks the package's non-test files against the export
// data the go command builds for its imports.
func loadLayer(t *testing.T) *layer {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, file, _ := strings.Cut(sc.Text(), " ")
		exports[path] = file
	}
	fset := token.NewFileSet()
	files := parseDir(t, fset, ".")
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	if _, err := (&types.Config{Importer: imp}).Check("cloudstack", fset, files, info); err != nil {
		t.Fatal(err)
	}
	l := &layer{t: t, fset: fset, info: info, decls: map[types.Object]*ast.FuncDecl{},
		calls: map[types.Object][]callSite{}, client: &clientSource{fset: fset, files: map[string]*clientFile{}}, out: sent{}}
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				l.decls[info.Defs[fd.Name]] = fd
			}
		}
	}
	for _, d := range l.decls {
		ast.Inspect(d, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if obj := l.callee(call); obj != nil {
					l.calls[obj] = append(l.calls[obj], callSite{call, d})
				}
			}
			return true
		})
	}
	return l
}

func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// callee is the function or method a call names, nil for a call of a
// value (a closure, an interface's method is a *types.Func too).
func (l *layer) callee(call *ast.CallExpr) types.Object {
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return l.info.Uses[fun]
	case *ast.SelectorExpr:
		return l.info.Uses[fun.Sel]
	}
	return nil
}

// request records what one call adds to a request.
func (l *layer) request(call *ast.CallExpr, in *ast.FuncDecl) {
	l.flowsIntoInterfaces(call)
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return
	}
	fn, ok := l.info.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != csgoPath {
		return
	}
	recv := fn.Type().(*types.Signature).Recv()
	switch name := fn.Name(); {
	case recv == nil:
	case name == "CustomRequest":
		cmd := l.constString(call.Args[0])
		l.add(call, cmd, l.customParams(call.Args[1], in)...)
	case strings.HasPrefix(name, "New") && strings.HasSuffix(name, "Params"):
		typ := paramsType(fn.Type().(*types.Signature).Results().At(0).Type())
		l.add(call, l.client.command(typ), l.client.constructorKeys(typ, name)...)
	case strings.HasPrefix(name, "Set"):
		if typ := paramsType(recv.Type()); typ != nil && typ.Obj().Name() != "CustomServiceParams" {
			l.add(call, l.client.command(typ), l.client.setterKey(typ, name))
		}
	}
}

// flowsIntoInterfaces: a typed request passed as an interface gets every
// setter the interface has.
func (l *layer) flowsIntoInterfaces(call *ast.CallExpr) {
	sig, ok := l.info.Types[call.Fun].Type.(*types.Signature)
	if !ok {
		return
	}
	for i, arg := range call.Args {
		typ := paramsType(l.info.Types[arg].Type)
		if typ == nil || typ.Obj().Name() == "CustomServiceParams" || sig.Params().Len() == 0 {
			continue
		}
		pt := sig.Params().At(min(i, sig.Params().Len()-1)).Type()
		iface, ok := pt.Underlying().(*types.Interface)
		if !ok {
			continue
		}
		for m := range iface.Methods() {
			if strings.HasPrefix(m.Name(), "Set") {
				l.add(arg, l.client.command(typ), l.client.setterKey(typ, m.Name()))
			}
		}
	}
}

// paramsType is the cloudstack-go request type t points to, or nil.
func paramsType(t types.Type) *types.Named {
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok {
		return nil
	}
	n, ok := types.Unalias(p.Elem()).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != csgoPath || !strings.HasSuffix(n.Obj().Name(), "Params") {
		return nil
	}
	return n
}

// add records a command and parameters, which must all have been read.
func (l *layer) add(n ast.Node, cmd string, params ...string) {
	l.t.Helper()
	if cmd == "" {
		l.fail(n, "a request whose command cloudstack-go's source does not name")
	}
	if l.out[cmd] == nil {
		l.out[cmd] = map[string]bool{}
	}
	for _, p := range params {
		if p == "" {
			l.fail(n, "a %s parameter whose name cloudstack-go's source does not give", cmd)
		}
		l.out[cmd][p] = true
	}
}

func (l *layer) fail(n ast.Node, format string, args ...any) {
	l.t.Helper()
	l.t.Fatalf("%s: "+format, append([]any{l.fset.Position(n.Pos())}, args...)...)
}

// constString is a compile-time string, such as a command name.
func (l *layer) constString(e ast.Expr) string {
	tv := l.info.Types[e]
	if tv.Value == nil || tv.Value.Kind() != constant.String {
		l.fail(e, "a command name that is not a constant")
	}
	return constant.StringVal(tv.Value)
}

// customParams are the names SetParam gives the CustomServiceParams e
// holds: a variable, or an empty literal.
func (l *layer) customParams(e ast.Expr, in *ast.FuncDecl) []string {
	if u, ok := e.(*ast.UnaryExpr); ok {
		if lit, ok := u.X.(*ast.CompositeLit); ok && len(lit.Elts) == 0 {
			return nil
		}
	}
	id, ok := e.(*ast.Ident)
	if !ok {
		l.fail(e, "CustomRequest's parameters are neither a variable nor an empty literal")
	}
	return l.varParams(l.info.Uses[id], in)
}

// varParams follows a CustomServiceParams variable through the function
// that has it and the package functions it is passed to.
func (l *layer) varParams(v types.Object, in *ast.FuncDecl) []string {
	var names []string
	ast.Inspect(in, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "SetParam" && l.refersTo(sel.X, v) {
			names = append(names, l.names(call.Args[0], in)...)
		}
		callee := l.decls[l.callee(call)]
		for i, arg := range call.Args {
			if callee != nil && l.refersTo(arg, v) {
				names = append(names, l.varParams(l.param(callee, i), callee)...)
			}
		}
		return true
	})
	return names
}

func (l *layer) refersTo(e ast.Expr, v types.Object) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	return ok && l.info.Uses[id] == v
}

// param is the i-th parameter of a declared function.
func (l *layer) param(d *ast.FuncDecl, i int) types.Object {
	var params []types.Object
	for _, f := range d.Type.Params.List {
		for _, n := range f.Names {
			params = append(params, l.info.Defs[n])
		}
	}
	return params[min(i, len(params)-1)]
}

// paramIndex is v's place among d's parameters, -1 if it is not one.
func (l *layer) paramIndex(d *ast.FuncDecl, v types.Object) int {
	i := 0
	for _, f := range d.Type.Params.List {
		for _, n := range f.Names {
			if l.info.Defs[n] == v {
				return i
			}
			i++
		}
	}
	return -1
}

// names are the constant strings e may hold in function in.
func (l *layer) names(e ast.Expr, in *ast.FuncDecl) []string {
	if tv := l.info.Types[e]; tv.Value != nil && tv.Value.Kind() == constant.String {
		return []string{constant.StringVal(tv.Value)}
	}
	return l.follow(e, in, l.names, func(rs *ast.RangeStmt) []string { return l.mapKeys(rs.X, in) })
}

// mapKeys are the constant keys the map e may hold in function in.
func (l *layer) mapKeys(e ast.Expr, in *ast.FuncDecl) []string {
	if lit, ok := ast.Unparen(e).(*ast.CompositeLit); ok {
		var keys []string
		for _, elt := range lit.Elts {
			keys = append(keys, l.names(elt.(*ast.KeyValueExpr).Key, in)...)
		}
		return keys
	}
	if l.info.Types[e].IsNil() {
		return nil
	}
	return l.follow(e, in, l.mapKeys, nil)
}

// follow resolves a variable: a parameter by the arguments of every call of
// its function, a local by what is assigned to it (and, with ranged, by
// the range it is the key of).
func (l *layer) follow(e ast.Expr, in *ast.FuncDecl, of func(ast.Expr, *ast.FuncDecl) []string,
	ranged func(*ast.RangeStmt) []string) []string {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok || l.info.Uses[id] == nil {
		l.fail(e, "cannot tell which parameter names this holds")
	}
	v := l.info.Uses[id]
	if i := l.paramIndex(in, v); i >= 0 {
		var out []string
		for _, site := range l.calls[l.info.Defs[in.Name]] {
			out = append(out, of(site.call.Args[i], site.in)...)
		}
		return out
	}
	var out []string
	found := false
	ast.Inspect(in, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				if l.defines(lhs, v) && len(n.Rhs) == len(n.Lhs) {
					out, found = append(out, of(n.Rhs[i], in)...), true
				}
			}
		case *ast.RangeStmt:
			if n.Key != nil && l.defines(n.Key, v) && ranged != nil {
				out, found = append(out, ranged(n)...), true
			}
		}
		return true
	})
	if !found {
		l.fail(e, "cannot tell which parameter names %s holds", id.Name)
	}
	return out
}

func (l *layer) defines(e ast.Expr, v types.Object) bool {
	id, ok := e.(*ast.Ident)
	return ok && (l.info.Defs[id] == v || l.info.Uses[id] == v)
}

// clientSource reads cloudstack-go's own source for what its request
// types send: the file that declares a type declares its setters, its
// constructor and the service method that sends it.
type clientSource struct {
	fset  *token.FileSet
	files map[string]*clientFile
}

type clientFile struct {
	setters  map[string]string   // "TParams.SetX" → parameter
	ctors    map[string][]string // "NewTParams" → parameters
	commands map[string]string   // "TParams" → command
}

func (c *clientSource) file(typ *types.Named) *clientFile {
	name := c.fset.Position(typ.Obj().Pos()).Filename
	if f := c.files[name]; f != nil {
		return f
	}
	f := &clientFile{setters: map[string]string{}, ctors: map[string][]string{}, commands: map[string]string{}}
	c.files[name] = f
	src, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
	if err != nil {
		return f // no such type is then known: the test names it
	}
	for _, d := range src.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Body != nil {
			f.index(fd)
		}
	}
	return f
}

// index reads one method: a setter's key, a constructor's keys, or the
// command a service method sends its request type as.
func (f *clientFile) index(fd *ast.FuncDecl) {
	recv := typeName(fd.Recv.List[0].Type)
	keys := mapKeysAssigned(fd.Body)
	switch name := fd.Name.Name; {
	case strings.HasPrefix(name, "Set") && len(keys) == 1:
		f.setters[recv+"."+name] = keys[0]
	case strings.HasPrefix(name, "New") && strings.HasSuffix(name, "Params"):
		f.ctors[name] = keys
	case len(fd.Type.Params.List) == 1:
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if sel, isSel := callFun(call); ok && isSel && (sel == "newRequest" || sel == "newPostRequest") {
				if lit, ok := call.Args[0].(*ast.BasicLit); ok {
					cmd, _ := strconv.Unquote(lit.Value)
					f.commands[typeName(fd.Type.Params.List[0].Type)] = cmd
				}
			}
			return true
		})
	}
}

func callFun(call *ast.CallExpr) (string, bool) {
	if call == nil {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	return sel.Sel.Name, true
}

func typeName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// mapKeysAssigned are the keys of every p.p["key"] = ... in body.
func mapKeysAssigned(body *ast.BlockStmt) []string {
	var keys []string
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 {
			return true
		}
		if ix, ok := as.Lhs[0].(*ast.IndexExpr); ok {
			if lit, ok := ix.Index.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				k, _ := strconv.Unquote(lit.Value)
				keys = append(keys, k)
			}
		}
		return true
	})
	return keys
}

func (c *clientSource) command(typ *types.Named) string {
	return c.file(typ).commands[typ.Obj().Name()]
}

func (c *clientSource) setterKey(typ *types.Named, setter string) string {
	return c.file(typ).setters[typ.Obj().Name()+"."+setter]
}

func (c *clientSource) constructorKeys(typ *types.Named, ctor string) []string {
	return c.file(typ).ctors[ctor]
}

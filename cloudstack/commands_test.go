package cloudstack_test

import (
	"go/ast"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// sentCommands reads the layer's own source for the commands it names:
// the first argument of every fail(...) and CustomRequest(...) call, the
// one place each command's errors pass through.
func sentCommands(t *testing.T) map[string]bool {
	t.Helper()
	found := map[string]bool{}
	for _, file := range parseDir(t, token.NewFileSet(), ".") {
		ast.Inspect(file, func(n ast.Node) bool {
			if cmd, ok := commandArg(n); ok {
				found[cmd] = true
			}
			return true
		})
	}
	return found
}

func commandArg(n ast.Node) (string, bool) {
	call, ok := n.(*ast.CallExpr)
	if !ok || len(call.Args) == 0 {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || (sel.Sel.Name != "fail" && sel.Sel.Name != "CustomRequest") {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// TestCommandsListsEveryCommandTheLayerSends: doctor checks the role
// allows cloudstack.Commands, so a command the layer sends must be on it
// (or on DoctorCommands, doctor's own), and the list names nothing the
// layer no longer sends.
func TestCommandsListsEveryCommandTheLayerSends(t *testing.T) {
	sent := sentCommands(t)
	listed := slices.Concat(cloudstack.Commands, cloudstack.OptionalCommands, cloudstack.DoctorCommands)
	for cmd := range sent {
		if !slices.Contains(listed, cmd) {
			t.Errorf("the layer sends %s, which cloudstack.Commands does not list", cmd)
		}
	}
	for _, cmd := range listed {
		if !sent[cmd] {
			t.Errorf("cloudstack.Commands lists %s, which the layer does not send", cmd)
		}
	}
	if len(sent) < 40 {
		t.Fatalf("found only %d commands in the layer's source: the reading is broken", len(sent))
	}
	for _, cmd := range slices.Concat(cloudstack.DoctorCommands, cloudstack.OptionalCommands) {
		if slices.Contains(cloudstack.Commands, cmd) {
			t.Errorf("%s is on both lists", cmd)
		}
	}
}

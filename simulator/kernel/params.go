package kernel

import (
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// maxBodyBytes bounds a form POST: 1 MB of base64 user data plus the rest.
const maxBodyBytes = 4 << 20

// rawParams are a request's parameters as CloudStack's servlet sees them: one
// value per name, names exactly as sent. Signatures are computed over these.
type rawParams map[string]string

// readParams merges a form body and the query string the way
// ApiServlet.processRequestInContext does: the servlet's parameter map keeps
// the first value of each body parameter, then ApiServlet.utf8Fixup
// re-decodes the query string and overwrites, so the last occurrence of a
// query parameter wins.
func readParams(r *http.Request) (rawParams, error) {
	p := rawParams{}
	if r.Method == http.MethodPost && isForm(r.Header.Get("Content-Type")) {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
		if err != nil {
			return nil, err
		}
		eachPair(string(b), func(k, v string) {
			if _, seen := p[k]; !seen {
				p[k] = v
			}
		})
	}
	eachPair(r.URL.RawQuery, func(k, v string) { p[k] = v })
	return p, nil
}

func isForm(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// eachPair splits "a=1&b=2" like Java's servlet and URLDecoder: only '&'
// separates pairs, '+' decodes to a space, pairs without '=' are ignored and
// so are pairs that do not decode.
func eachPair(s string, fn func(k, v string)) {
	for _, tok := range strings.Split(s, "&") {
		k, v, ok := strings.Cut(tok, "=")
		if !ok || k == "" {
			continue
		}
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			continue
		}
		fn(dk, dv)
	}
}

// sortedNames returns the parameter names in Java's String order, which for
// the UTF-16 code units of ASCII names equals Go's byte order.
func (p rawParams) sortedNames() []string {
	names := make([]string, 0, len(p))
	for k := range p {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// withControlCharacter is ApiServer.checkCharacterInkParams: the first
// parameter (by name; the Java's HashMap order is arbitrary) whose value holds
// an ASCII control character other than LF and CR (CONTROL_CHARACTERS), except
// activationrule.
func (p rawParams) withControlCharacter() (string, bool) {
	for _, name := range p.sortedNames() {
		if name == "activationrule" {
			continue
		}
		if strings.IndexFunc(p[name], isRefusedControl) >= 0 {
			return name, true
		}
	}
	return "", false
}

func isRefusedControl(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\r') || r == 0x7f
}

// Params are a request's parameters after CloudStack's ParamUnpackWorker:
// names lowercased, "name[i].field=value" gathered into object arrays.
type Params struct {
	Values map[string]string
	maps   map[string]map[int]map[string]string
}

// unpack is ParamUnpackWorker.handle, including its 430 for malformed array
// parameters. Departure: a key starting with '[' is an array with an empty
// name here, a plain parameter in the Java.
func unpack(raw rawParams) (Params, *APIError) {
	p := Params{Values: map[string]string{}, maps: map[string]map[int]map[string]string{}}
	for key, value := range raw {
		open := strings.IndexByte(key, '[')
		if open < 0 {
			p.Values[strings.ToLower(key)] = value
			continue
		}
		name, index, field, ok := splitArrayKey(key, open)
		if !ok {
			return Params{}, &APIError{Code: codeMalformedParam, CSCode: CsServerAPIException, Text: "Unable to decode parameter " + key +
				"; if specifying an object array, please use parameter[index].field=XXX, e.g. userGroupList[0].group=httpGroup"}
		}
		if p.maps[name] == nil {
			p.maps[name] = map[int]map[string]string{}
		}
		if p.maps[name][index] == nil {
			p.maps[name][index] = map[string]string{}
		}
		p.maps[name][index][field] = value
	}
	return p, nil
}

// splitArrayKey parses "name[index].field".
func splitArrayKey(key string, open int) (name string, index int, field string, ok bool) {
	if strings.LastIndexByte(key, '[') != open {
		return "", 0, "", false
	}
	end := strings.IndexByte(key, ']')
	if end < open || strings.LastIndexByte(key, ']') != end {
		return "", 0, "", false
	}
	dot := strings.IndexByte(key, '.')
	if dot < end {
		return "", 0, "", false
	}
	n, err := strconv.Atoi(key[open+1 : end])
	if err != nil {
		return "", 0, "", false
	}
	return strings.ToLower(key[:open]), n, key[dot+1:], true
}

// drop forgets a plain or map parameter: one the served release's command
// class has no field for, which ParamProcessWorker.processParameters never
// sets (dropLaterParams).
func (p Params) drop(name string) {
	delete(p.Values, name)
	delete(p.maps, name)
}

// Get returns a parameter's value, "" when absent.
func (p Params) Get(name string) string { return p.Values[name] }

// Has reports whether a plain or map parameter was sent.
func (p Params) Has(name string) bool {
	if _, ok := p.Values[name]; ok {
		return true
	}
	_, ok := p.maps[name]
	return ok
}

// List splits a list parameter on commas, dropping empty items as the
// StringTokenizer of ParamProcessWorker.setFieldValue does.
func (p Params) List(name string) []string {
	var out []string
	for _, s := range strings.Split(p.Values[name], ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Bool reads a boolean parameter; def when absent.
func (p Params) Bool(name string, def bool) bool {
	v, ok := p.Values[name]
	if !ok {
		return def
	}
	return strings.EqualFold(v, "true")
}

// Int reads an integer parameter; def when absent or blank (validation has
// already rejected malformed numbers).
func (p Params) Int(name string, def int64) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(p.Values[name]), 10, 64)
	if err != nil {
		return def
	}
	return n
}

// Map returns a map parameter's objects ordered by index.
func (p Params) Map(name string) []map[string]string {
	m := p.maps[name]
	idx := make([]int, 0, len(m))
	for i := range m {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]map[string]string, 0, len(idx))
	for _, i := range idx {
		out = append(out, m[i])
	}
	return out
}

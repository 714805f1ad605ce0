package jsonwords_test

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
)

// Scan names a key given twice by its path, and the first value past a
// limit; what is not JSON, and what passes, it lets by.
func TestScan(t *testing.T) {
	lim := jsonwords.Limits{MaxValues: 6, MaxDepth: 3}
	for doc, want := range map[string]string{
		`{"a":1,"a":2}`:         "a: the key is given twice",
		`{"a":[{"c":1,"c":1}]}`: "a[0].c: the key is given twice",
		`{"a":1,"b":{"a":1}}`:   "",
		`[{"a":1},{"a":1}]`:     "",
		`[1,2,3,4,5]`:           "",
		`[1,2,3,4,5,6]`:         "[5]: more than 6 values",
		`[[[]]]`:                "",
		`[[[[]]]]`:              "[0][0][0]: objects and arrays nested more than 3 deep",
		`{"a":1,"a":`:           "", // not JSON: the decoder's error says where
		`{"n":1e999,"n":1}`:     "n: the key is given twice",
	} {
		e := jsonwords.Scan([]byte(doc), lim)
		switch {
		case want == "" && e != nil:
			t.Errorf("%s: %v", doc, e)
		case want != "" && (e == nil || !strings.HasPrefix(e.Error(), want)):
			t.Errorf("%s: got %v, want %q", doc, e, want)
		case e != nil && e.OverLimit != strings.Contains(want, "more than"):
			t.Errorf("%s: OverLimit %v", doc, e.OverLimit)
		}
	}
	if e := jsonwords.Scan([]byte(`[[[[[1,1,1,1,1,1,1]]]]]`), jsonwords.Limits{}); e != nil {
		t.Errorf("no limits: %v", e)
	}
}

package jsonwords_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
)

type props struct {
	Name  string            `json:"name"`
	Size  int               `json:"size"`
	Ratio float64           `json:"ratio"`
	On    *bool             `json:"on"`
	Tags  []string          `json:"tags"`
	Inner struct{ N uint }  `json:"inner"`
	Meta  map[string]string `json:"meta"`
}

// Every JSON type decoded into every kind of Go value is said in JSON
// words, at its path.
func TestTypeErrorsInJSONWords(t *testing.T) {
	for doc, want := range map[string]string{
		`{"name":5}`:         "name: expected a string, got a number",
		`{"size":"big"}`:     "size: expected an integer, got a string",
		`{"size":2.5}`:       "size: expected an integer, got the number 2.5",
		`{"ratio":true}`:     "ratio: expected a number, got true or false",
		`{"on":"yes"}`:       "on: expected true or false, got a string",
		`{"tags":"a"}`:       "tags: expected an array of strings, got a string",
		`{"tags":[1]}`:       "tags: expected a string, got a number",
		`{"inner":[]}`:       "inner: expected an object, got an array",
		`{"inner":{"N":-1}}`: "inner.N: expected a non-negative integer, got the number -1",
		`{"meta":{"a":{}}}`:  "meta: expected a string, got an object",
		`[1]`:                "expected an object, got an array",
	} {
		var p props
		err := jsonwords.Translate(json.Unmarshal([]byte(doc), &p))
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", doc, err, want)
		}
	}
}

// In puts the path under what was decoded, wrapped or not.
func TestInNamesWhatWasDecoded(t *testing.T) {
	var p props
	err := json.Unmarshal([]byte(`{"name":5}`), &p)
	if got := jsonwords.In("stemcell cloud_properties", fmt.Errorf("reading: %w", err)); got == nil ||
		got.Error() != "stemcell cloud_properties.name: expected a string, got a number" {
		t.Errorf("got %v", got)
	}
	err = json.Unmarshal([]byte(`"x"`), &p)
	if got := jsonwords.In("VM cloud_properties", err); got == nil || got.Error() != "VM cloud_properties: expected an object, got a string" {
		t.Errorf("got %v", got)
	}
	dec := json.NewDecoder(strings.NewReader(`{"nme":"x"}`))
	dec.DisallowUnknownFields()
	if got := jsonwords.In("disk cloud_properties", dec.Decode(&p)); got == nil ||
		got.Error() != `disk cloud_properties: unknown field "nme"` {
		t.Errorf("got %v", got)
	}
	if jsonwords.In("x", nil) != nil || jsonwords.Translate(nil) != nil {
		t.Error("no error became one")
	}
	if got := jsonwords.Translate(errors.New("json: something")); got.Error() != "something" {
		t.Errorf("got %v", got)
	}
}

// Syntax errors are placed by line, column (in characters) and offset.
func TestSyntaxErrorsArePlaced(t *testing.T) {
	for doc, want := range map[string]string{
		"{\n  \"a\": tru }": "line 2, column 11 (byte offset 12): invalid character ' ' in literal true (expecting 'e')",
		`{"é":1,}`:          "line 1, column 8 (byte offset 8): invalid character '}' looking for beginning of object key string",
		`{"a":`:             "line 1, column 6 (byte offset 5): unexpected end of JSON input",
		"":                  "line 1, column 1 (byte offset 0): unexpected end of JSON input",
	} {
		var v any
		if got := jsonwords.SyntaxAt([]byte(doc), json.Unmarshal([]byte(doc), &v)); got != want {
			t.Errorf("%q: got %q, want %q", doc, got, want)
		}
	}
}

func TestKindNamesDecodedValues(t *testing.T) {
	for _, c := range []struct {
		doc, want string
	}{{`null`, "null"}, {`"s"`, "a string"}, {`1`, "a number"}, {`false`, "true or false"}, {`[]`, "an array"}, {`{}`, "an object"}} {
		var v any
		if err := json.Unmarshal([]byte(c.doc), &v); err != nil {
			t.Fatal(err)
		}
		if got := jsonwords.Kind(v); got != c.want {
			t.Errorf("%s: %q, want %q", c.doc, got, c.want)
		}
	}
}

// Package jsonwords says what is wrong with a JSON document in JSON's own
// words. The people who read the CPI's answers write JSON and YAML (a
// manifest, a cloud-config, cpi.json); encoding/json's messages name the
// CPI's Go types instead ("cannot unmarshal string into Go value of type
// map[string]interface {}"), which tells them neither what was expected
// nor where. DecodeStrict reads cloud_properties in these words, refusing
// unknown keys; Bool is the boolean manifests also write as a string.
package jsonwords

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Error is a decoding failure in JSON words.
type Error struct {
	// Path is the dotted path of the value at fault below the document
	// ("default.ip"), empty for the document itself.
	Path string
	// Problem is what is wrong there: "expected a string, got a number".
	Problem string
	// OverLimit says the document is past one of Scan's Limits, not wrong.
	OverLimit bool
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

// Translate is err, an error of encoding/json's decoding, in JSON words:
// a type error names the path and the JSON types wanted and found, any
// other error loses the decoder's "json: " prefix. nil stays nil.
func Translate(err error) *Error {
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return &Error{Path: typeErr.Field, Problem: "expected " + Expected(typeErr.Type) + ", got " + found(typeErr.Value)}
	}
	var invalid *json.InvalidUnmarshalError
	if errors.As(err, &invalid) {
		return &Error{Problem: "the CPI could not decode it (a fault of the CPI's own)"}
	}
	return &Error{Problem: strings.TrimPrefix(err.Error(), "json: ")}
}

// In is err translated, under what was decoded: In("stemcell
// cloud_properties", err) reads "stemcell cloud_properties.name: expected a
// string, got a number".
func In(what string, err error) error {
	e := Translate(err)
	if e == nil {
		return nil
	}
	if e.Path == "" {
		return fmt.Errorf("%s: %s", what, e.Problem)
	}
	return fmt.Errorf("%s.%s: %s", what, e.Path, e.Problem)
}

// Expected names the JSON a value of Go type t is decoded from.
func Expected(t reflect.Type) string {
	if t == nil {
		return "another JSON type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another JSON type"
}

// found names what encoding/json's UnmarshalTypeError.Value describes:
// "string", "bool", "array", "object", "number" or "number 2.5".
func found(value string) string {
	switch {
	case value == "string":
		return "a string"
	case value == "bool":
		return "true or false"
	case value == "array":
		return "an array"
	case value == "object":
		return "an object"
	case value == "number":
		return "a number"
	case strings.HasPrefix(value, "number "):
		return "the number " + strings.TrimPrefix(value, "number ")
	}
	return value
}

// Kind names the JSON type of a value decoded into any: "a string",
// "null", "an object"…
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "true or false"
	case float64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "another JSON type"
}

// Position is where offset (a byte count into data, as json.SyntaxError
// and json.UnmarshalTypeError give it) is, as an editor shows it: "line 3,
// column 7 (byte offset 41)". Columns count characters from 1.
func Position(data []byte, offset int64) string {
	offset = max(0, min(offset, int64(len(data))))
	before := string(data[:offset])
	line := strings.Count(before, "\n") + 1
	column := len([]rune(before[strings.LastIndex(before, "\n")+1:])) + 1
	return fmt.Sprintf("line %d, column %d (byte offset %d)", line, column, offset)
}

// SyntaxAt is err, when a json.SyntaxError, with its position in data:
// "line 1, column 9 (byte offset 8): invalid character 'x' looking for beginning
// of value". Any other error is Translate's.
func SyntaxAt(data []byte, err error) string {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		at := syntax.Offset
		if strings.HasPrefix(syntax.Error(), "invalid character") {
			at-- // the decoder counts the offending byte as read
		}
		return Position(data, at) + ": " + syntax.Error()
	}
	return Translate(err).Error()
}

// Message is err's message with the type error in it, if any, said in JSON
// words: cpi.json and the call context's properties are decoded by config/,
// whose decoder names the Go field and type at fault.
func Message(err error) string {
	msg := err.Error()
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		msg = strings.Replace(msg, typeErr.Error(), Translate(typeErr).Error(), 1)
	}
	return msg
}

package jsonwords

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Limits bound what Scan lets through; 0 is no bound.
type Limits struct {
	// MaxValues bounds the values of a document: every member's value and
	// every array element, nested ones included, and the document itself.
	// Decoding costs memory by the value far more than by the byte (a
	// small object decoded into Go takes a hundred times its text), so a
	// bound on bytes alone does not bound it.
	MaxValues int
	// MaxDepth bounds how deep objects and arrays nest; the document
	// itself is at depth 1.
	MaxDepth int
}

// Scan reads data token by token, building nothing, and names the first
// object member given twice (encoding/json keeps the last one silently, so
// which was meant cannot be told) or the first value past a limit, where
// it stops reading. Data that is not JSON is not Scan's to name: it
// returns nil, for json.Unmarshal's error to say where (SyntaxAt).
func Scan(data []byte, lim Limits) *Error {
	if !json.Valid(data) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a number too large for a float64 is for the decoder to name
	s := &scan{dec: dec, lim: lim}
	// The data is valid JSON, so the decoder fails on nothing; had it
	// failed, there would be no problem of Scan's to name (e is nil).
	e, _ := s.value()
	return e
}

type scan struct {
	dec    *json.Decoder
	lim    Limits
	values int
	// path is the way to the value being read, one segment per level
	// (".key", "[3]"): joined only for an error, so that deep nesting
	// costs no more than its depth.
	path []string
}

func (s *scan) fail(problem string) *Error {
	return &Error{Path: strings.TrimPrefix(strings.Join(s.path, ""), "."), Problem: problem}
}

func (s *scan) overLimit(problem string) *Error {
	e := s.fail(problem)
	e.OverLimit = true
	return e
}

// value reads one value. err is a syntax error, which ends the scan with
// nothing to say.
func (s *scan) value() (*Error, error) {
	s.values++
	if s.lim.MaxValues > 0 && s.values > s.lim.MaxValues {
		return s.overLimit(fmt.Sprintf("more than %d values (members and array elements, nested ones included)",
			s.lim.MaxValues)), nil
	}
	tok, err := s.dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') && tok != json.Delim('[') {
		return nil, nil
	}
	if s.lim.MaxDepth > 0 && len(s.path) >= s.lim.MaxDepth {
		return s.overLimit(fmt.Sprintf("objects and arrays nested more than %d deep", s.lim.MaxDepth)), nil
	}
	if tok == json.Delim('{') {
		return s.object()
	}
	return s.array()
}

func (s *scan) object() (*Error, error) {
	seen := map[string]bool{}
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		s.path = append(s.path, "."+key)
		if seen[key] {
			return s.fail("the key is given twice in one object, and only one value can be meant: " +
				"a JSON decoder keeps the last one without a word"), nil
		}
		seen[key] = true
		if e, err := s.value(); e != nil || err != nil {
			return e, err
		}
		s.path = s.path[:len(s.path)-1]
	}
	_, err := s.dec.Token() // }
	return nil, err
}

func (s *scan) array() (*Error, error) {
	for i := 0; s.dec.More(); i++ {
		s.path = append(s.path, fmt.Sprintf("[%d]", i))
		if e, err := s.value(); e != nil || err != nil {
			return e, err
		}
		s.path = s.path[:len(s.path)-1]
	}
	_, err := s.dec.Token() // ]
	return nil, err
}

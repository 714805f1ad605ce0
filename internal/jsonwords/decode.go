package jsonwords

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// DecodeStrict reads a decoded document (cloud_properties as the director
// sent them) into v, refusing keys v has no field for: a typo must not
// silently give a VM or disk the wrong size. Errors read In(what
// cloud_properties).
func DecodeStrict(doc any, v any, what string) error {
	raw, err := json.Marshal(doc)
	if err != nil || string(raw) == "null" {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return In(what+" cloud_properties", err)
	}
	return nil
}

// Bool is a boolean a manifest may also give as "true" or "false".
type Bool bool

// UnmarshalJSON takes true, false, "true" and "false" (and the other
// spellings strconv.ParseBool knows).
func (b *Bool) UnmarshalJSON(raw []byte) error {
	if string(raw) == "null" {
		return nil
	}
	v, err := strconv.ParseBool(strings.Trim(string(raw), `"`))
	if err != nil {
		return fmt.Errorf("want true or false, not %s", raw)
	}
	*b = Bool(v)
	return nil
}

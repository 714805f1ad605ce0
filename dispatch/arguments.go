package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/cloudfoundry/bosh-cpi-go/rpc"
	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
)

// argumentCaller decodes a call's arguments as bosh-cpi-go's JSONCaller
// does, into the types of the action's parameters, before it does: a
// wrong one is named by its position, its name and its path, in JSON
// words ("arguments[3] (networks.default.ip): expected a string, got a
// number"), where JSONCaller's message names the Go type it decodes into.
// Arguments beyond the method's are ignored, as JSONCaller ignores them,
// and logged.
type argumentCaller struct {
	rpc.Caller
	logger boshlog.Logger
}

// Call implements rpc.Caller.
func (c argumentCaller) Call(action interface{}, args []interface{}) (interface{}, error) {
	named, ok := action.(namedAction)
	if !ok {
		return c.Caller.Call(action, args)
	}
	if err := c.check(named, args); err != nil {
		return nil, err
	}
	return c.Caller.Call(named.run, args)
}

func (c argumentCaller) check(a namedAction, args []interface{}) error {
	fn := reflect.TypeOf(a.run)
	if fn == nil || fn.Kind() != reflect.Func {
		return nil // not an action JSONCaller decodes arguments for: it says so itself
	}
	names := methodArguments[a.method]
	if len(args) < fn.NumIn() {
		return fmt.Errorf("not enough arguments: %s takes %d (%s), got %d", a.method, fn.NumIn(),
			strings.Join(names, ", "), len(args))
	}
	if extra := len(args) - fn.NumIn(); extra > 0 {
		c.logger.Warn("main", "%s takes %d arguments; the %d after them are ignored", a.method, fn.NumIn(), extra)
	}
	for i := 0; i < fn.NumIn(); i++ {
		name := fmt.Sprintf("argument %d", i)
		if i < len(names) {
			name = names[i]
		}
		if e := checkArgument(name, args[i], fn.In(i)); e != nil {
			return fmt.Errorf("arguments[%d] (%s): %s", i, e.Path, e.Problem)
		}
	}
	return nil
}

// checkArgument says what is wrong with arg as a value of t, at a path
// starting with the argument's name. cloud_properties, which bosh-cpi-go
// takes as any JSON, must be an object (or null): every CPI method reads
// it as one.
func checkArgument(name string, arg any, t reflect.Type) *jsonwords.Error {
	if name == "cloud_properties" {
		if _, isObject := arg.(map[string]any); !isObject && arg != nil {
			return &jsonwords.Error{Path: name, Problem: "expected an object, got " + jsonwords.Kind(arg)}
		}
	}
	raw, err := json.Marshal(arg)
	if err != nil {
		return &jsonwords.Error{Path: name, Problem: err.Error()}
	}
	e := decodeError(raw, t)
	if e == nil {
		return nil
	}
	return &jsonwords.Error{Path: joinJSONPath(name, e.Path), Problem: e.Problem}
}

// decodeError is what decoding raw into a t goes wrong on, if anything. A
// map or an array whose elements decode by a method of their own (the
// networks, the disk CIDs) loses the key or index of the element at fault
// on the way: it is found by decoding the elements one by one.
func decodeError(raw []byte, t reflect.Type) *jsonwords.Error {
	err := json.Unmarshal(raw, reflect.New(t).Interface())
	if err == nil {
		return nil
	}
	e := jsonwords.Translate(boshCause(err))
	switch t.Kind() {
	case reflect.Map:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) == nil {
			if len(members) == 1 {
				for k := range members {
					return &jsonwords.Error{Path: joinJSONPath(k, e.Path), Problem: e.Problem}
				}
			}
			keys := make([]string, 0, len(members))
			for k := range members {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				one, _ := json.Marshal(map[string]json.RawMessage{k: members[k]})
				if inner := decodeError(one, t); inner != nil {
					return &jsonwords.Error{Path: joinJSONPath(k, inner.Path), Problem: inner.Problem}
				}
			}
		}
	case reflect.Slice:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) == nil {
			for i, item := range items {
				if inner := decodeError(item, t.Elem()); inner != nil {
					return &jsonwords.Error{Path: joinJSONPath(fmt.Sprintf("[%d]", i), inner.Path), Problem: inner.Problem}
				}
			}
		}
	}
	return e
}

// joinJSONPath appends a member's path to its parent's: "networks" and
// "default.ip", "disk_cids" and "[2]".
func joinJSONPath(parent, child string) string {
	switch {
	case child == "":
		return parent
	case strings.HasPrefix(child, "["):
		return parent + child
	}
	return parent + "." + child
}

// boshCause is the error bosh-utils' wrapping hides: its ComplexError has
// no Unwrap for errors.As to see through it to encoding/json's error.
func boshCause(err error) error {
	var complexErr bosherr.ComplexError
	for errors.As(err, &complexErr) {
		err = complexErr.Cause
	}
	return err
}

package simulator

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// uuidPattern is the UUID shape CloudStack's ParamProcessWorker accepts
// (case-insensitive here, as the database lookup behind it is).
var uuidPattern = regexp.MustCompile(`^(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// validate checks a request against the command's 4.22 schema the way
// ParamProcessWorker does: required parameters first, then each value's type,
// then BaseListCmd's paging rules. Parameters the schema does not know are
// ignored, as CloudStack ignores them.
func (c *Call) validate() *APIError {
	cmd := strings.ToLower(c.API.Name)
	for _, p := range c.API.Params {
		name := strings.ToLower(p.Name)
		if !c.Params.Has(name) {
			if p.Required {
				return serverParamError("Unable to execute API command %s due to missing parameter %s", cmd, p.Name)
			}
			continue
		}
		if err := c.checkValue(cmd, p, name); err != nil {
			return err
		}
	}
	if _, ok := c.API.Param("pagesize"); ok {
		return validatePaging(c.Params)
	}
	return nil
}

// checkValue rejects values that do not convert to the parameter's type.
// The messages are CloudStack's; the cserrorcode is 4350
// (InvalidParameterValueException) for every bad value.
func (c *Call) checkValue(cmd string, p schema.Param, name string) *APIError {
	v, plain := c.Params.values[name]
	if !plain {
		return nil // map parameters carry no type to check
	}
	invalid := func() *APIError {
		return paramError("Unable to execute API command %s due to invalid value %s for parameter %s", cmd, v, p.Name)
	}
	switch p.Type {
	case "uuid":
		return c.checkUUID(cmd, p.Name, name, v)
	case "integer", "short", "long":
		if strings.TrimSpace(v) == "" && p.Type == "integer" {
			return nil // blank integers are ignored, as in setFieldValue
		}
		if _, err := strconv.ParseInt(v, 10, bitSize(p.Type)); err != nil {
			return invalid()
		}
	case "double", "float":
		if _, err := strconv.ParseFloat(v, 64); err != nil && strings.TrimSpace(v) != "" {
			return invalid()
		}
	case "boolean":
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return invalid()
		}
	case "date":
		if !validDate(v) {
			return paramError("Unable to parse date %s for command %s, please pass dates in the format mentioned in the api documentation", v, cmd)
		}
	case "string":
		if p.Length > 0 && len(utf16.Encode([]rune(v))) > p.Length {
			return paramError("Unable to execute API command %s due to invalid value. Value greater than max allowed length %d for param: %s", cmd, p.Length, p.Name)
		}
	case "list":
		return c.checkUUIDList(cmd, p.Name, name, v)
	}
	return nil
}

func bitSize(typ string) int {
	switch typ {
	case "short":
		return 16
	case "integer":
		return 32
	}
	return 64
}

// validDate accepts what SimpleDateFormat("yyyy-MM-dd").parse accepts: a
// valid date at the start of the value, whatever follows.
func validDate(v string) bool {
	if len(v) < len("2006-01-02") {
		return false
	}
	_, err := time.Parse("2006-01-02", v[:10])
	return err == nil
}

// checkUUID accepts a UUID of an existing (possibly removed) entity of the
// right kind, CloudStack's "-1" placeholder, or a legacy numeric id. Anything
// else gets translateUuidToInternalId's message.
func (c *Call) checkUUID(cmd, display, name, v string) *APIError {
	if v == "-1" || isPositiveInt(v) {
		return nil
	}
	bad := paramError("Unable to execute API command %s due to invalid value. Invalid parameter %s value=%s"+
		" due to incorrect long value format, or entity does not exist or due to incorrect parameter annotation"+
		" for the field in api cmd class.", cmd, display, v)
	if !uuidPattern.MatchString(v) {
		return bad
	}
	kind := c.uuidKind(name)
	if kind != "" && !c.st.exists(kind, strings.ToLower(v)) {
		return bad
	}
	return nil
}

// checkUUIDList checks the items of list parameters named "ids" or "<x>ids",
// which CloudStack declares as lists of UUIDs.
func (c *Call) checkUUIDList(cmd, display, name, v string) *APIError {
	if !strings.HasSuffix(name, "ids") {
		return nil
	}
	for _, item := range c.Params.List(name) {
		if err := c.checkUUID(cmd, display, name, item); err != nil {
			return err
		}
	}
	return nil
}

// uuidKind is the entity kind a UUID parameter names: "id"/"ids" name the
// command's own kind, "<x>ids" the kind of "<x>id".
func (c *Call) uuidKind(name string) string {
	if name == "id" || name == "ids" {
		return commands[c.API.Name].idKind
	}
	return paramKinds[strings.TrimSuffix(name, "s")]
}

func isPositiveInt(v string) bool {
	n, err := strconv.ParseInt(v, 10, 64)
	return err == nil && n > 0
}

package kernel

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// UUIDPattern is the UUID shape of ParamProcessWorker.translateUuidToInternalId.
// Departure: the Java pattern is lower-case only, and a 3.x+ parameter that
// does not match is silently set to null; here any case matches and a
// mismatch is refused (clients send the lower-case UUIDs CloudStack hands out).
var UUIDPattern = regexp.MustCompile(`^(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// validate checks a request against the command's schema in the release
// served the way ParamProcessWorker.processParameters does: required
// parameters first, then each value's type (setFieldValue), then
// BaseListCmd.validateSpecificParameters and getPageSize. Parameters the
// schema does not know are ignored, as ParamGenericValidationWorker only
// logs them.
func (c *Call) validate() *APIError {
	c.dropLaterParams()
	cmd := strings.ToLower(c.API.Name)
	for _, p := range c.API.Params {
		name := strings.ToLower(p.Name)
		if !c.Params.Has(name) {
			if p.Required {
				return ServerParamError("Unable to execute API command %s due to missing parameter %s", cmd, p.Name)
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

// dropLaterParams removes the parameters a later release added to the
// command: the served release's command class has no field for them, so
// ParamGenericValidationWorker.handle only logs them as unknown and
// ParamProcessWorker.processParameters, which sets the class's @Parameter
// fields only, never reads them. So 4.20's updateLoadBalancerRule ignores
// cidrlist, which UpdateLoadBalancerRuleCmd has since 4.22.
func (c *Call) dropLaterParams() {
	newest, ok := schema.Lookup(c.API.Name)
	if !ok || newest == c.API {
		return
	}
	for _, p := range newest.Params {
		if _, served := c.API.Param(p.Name); !served {
			c.Params.drop(strings.ToLower(p.Name))
		}
	}
}

// checkValue rejects values that do not convert to the parameter's type, as
// ParamProcessWorker.setFieldValue does. processParameters rethrows every
// failure as a ServerApiException(PARAM_ERROR) without its cause, so the
// cserrorcode is always 9999.
func (c *Call) checkValue(cmd string, p schema.Param, name string) *APIError {
	v, plain := c.Params.Values[name]
	if !plain {
		return nil // map parameters carry no type to check
	}
	invalid := func() *APIError {
		return ServerParamError("Unable to execute API command %s due to invalid value %s for parameter %s", cmd, v, p.Name)
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
		return nil // Boolean.valueOf: anything but "true" (any case) is false
	case "date":
		if !validDate(v) {
			return ServerParamError("Unable to parse date %s for command %s, please pass dates in the format mentioned in the api documentation", v, cmd)
		}
	case "string":
		// Departure: the Java text names the command class's field (e.g.
		// displayText), which the schema does not carry; this names the parameter.
		if p.Length > 0 && len(utf16.Encode([]rune(v))) > p.Length {
			return ServerParamError("Unable to execute API command %s due to invalid value. Value greater than max allowed length %d for param: %s", cmd, p.Length, p.Name)
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

// checkUUID is ParamProcessWorker.translateUuidToInternalId: a UUID of an
// existing (possibly removed, findByUuidIncludingRemoved) entity of the right
// kind, the "-1" placeholder, or a numeric id. Departure: the Java takes
// numeric ids only for pre-3.x parameters (empty "since"); here any.
func (c *Call) checkUUID(cmd, display, name, v string) *APIError {
	if v == "-1" || isPositiveInt(v) {
		return nil
	}
	bad := ServerParamError("Unable to execute API command %s due to invalid value. Invalid parameter %s value=%s"+
		" due to incorrect long value format, or entity does not exist or due to incorrect parameter annotation"+
		" for the field in api cmd class.", cmd, display, v)
	if !UUIDPattern.MatchString(v) {
		return bad
	}
	kind := c.uuidKind(name)
	if kind != "" && !c.State.Exists(kind, strings.ToLower(v)) {
		return bad
	}
	return nil
}

// checkUUIDList checks the items of list parameters named "ids" or "<x>ids",
// which CloudStack declares as lists of UUIDs.
func (c *Call) checkUUIDList(cmd, display, name, v string) *APIError {
	// CreateTagsCmd, DeleteTagsCmd and the resource-icon commands declare
	// resourceids a LIST of STRING with no entityType, so
	// ParamProcessWorker.translateUuidToInternalId leaves it alone and a bad
	// id fails later, inside the job (TaggedResourceManagerImpl.createTags).
	if !strings.HasSuffix(name, "ids") || name == "resourceids" {
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
		return Registered[c.API.Name].IDKind
	}
	return ParamKinds[strings.TrimSuffix(name, "s")]
}

func isPositiveInt(v string) bool {
	n, err := strconv.ParseInt(v, 10, 64)
	return err == nil && n > 0
}

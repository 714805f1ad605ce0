package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// HTTP status codes CloudStack uses for API errors (ApiErrorCode.getHttpCode).
// The body's errorcode always equals the HTTP status
// (ApiServer.getSerializedApiError).
const (
	codeUnauthorized   = 401
	codeMalformedParam = 430
	codeParamError     = 431
	codeUnsupported    = 432
	codeLimitExceeded  = 429
	codeInternalError  = 530
	codeAccountError   = 531
	codeResourceLimit  = 532
	codeCapacity       = 533
	codeUnavailable    = 534
	codeAllocation     = 535
	codeInUse          = 536
	codeRuleConflict   = 537
)

// cserrorcode values: the Java exception class behind an error
// (CSExceptionErrorCode).
const (
	csCloudRuntime       = 4250
	csAccountLimit       = 4280
	csInsufficientCap    = 4325
	csInvalidParam       = 4350
	csRuleConflict       = 4360
	csPermissionDenied   = 4365
	csResourceAlloc      = 4370
	csResourceInUse      = 4375
	csResourceUnavail    = 4380
	csRequestLimit       = 4545
	csUnavailableCmd     = 4555
	csServerAPIException = 9999 // a bare ServerApiException
)

// defaultCSCode is the cserrorcode CloudStack typically pairs with an HTTP
// code, used when a fault rule (a simulator feature, no Java) names only the
// HTTP code: the code of the exception ApiServer.handleRequest wraps for it.
func defaultCSCode(code int) int {
	switch code {
	case codeParamError:
		return csInvalidParam
	case codeUnsupported:
		return csUnavailableCmd
	case codeLimitExceeded:
		return csRequestLimit
	case codeAccountError:
		return csPermissionDenied
	case codeResourceLimit:
		return csAccountLimit
	case codeCapacity:
		return csInsufficientCap
	case codeUnavailable:
		return csResourceUnavail
	case codeAllocation:
		return csResourceAlloc
	case codeInUse:
		return csResourceInUse
	case codeRuleConflict:
		return csRuleConflict
	case codeUnauthorized:
		return 0
	}
	return csCloudRuntime
}

// defaultErrorText is ExceptionResponse's text when none is set.
const defaultErrorText = "Command failed due to Internal Server Error"

// APIError is a CloudStack API error. Handlers return it; the server writes it
// as {"<command>response":{"uuidList":[],"errorcode":…,"cserrorcode":…,"errortext":…}}
// with HTTP status Code.
type APIError struct {
	Code   int    // errorcode and HTTP status
	CSCode int    // cserrorcode; 0 omits it, as CloudStack does for authentication failures
	Text   string // errortext

	// responseName replaces "<command>response": CloudStack answers
	// "errorresponse" for unknown and unsupported commands.
	responseName string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("CloudStack API error %d (CSExceptionErrorCode: %d): %s", e.Code, e.CSCode, e.Text)
}

// paramError is an InvalidParameterValueException: 431 with cserrorcode 4350.
func paramError(format string, args ...any) *APIError {
	return &APIError{Code: codeParamError, CSCode: csInvalidParam, Text: fmt.Sprintf(format, args...)}
}

// serverParamError is a ServerApiException(PARAM_ERROR) without a cause: 431
// with 9999 (its constructor's CSExceptionErrorCode), what
// ParamProcessWorker.processParameters throws for missing and bad values.
func serverParamError(format string, args ...any) *APIError {
	return &APIError{Code: codeParamError, CSCode: csServerAPIException, Text: fmt.Sprintf(format, args...)}
}

// internalError is a CloudRuntimeException: 530 with 4250.
func internalError(format string, args ...any) *APIError {
	return &APIError{Code: codeInternalError, CSCode: csCloudRuntime, Text: fmt.Sprintf(format, args...)}
}

// unauthorized is the answer to every failed signature or key check.
func unauthorized(text string) *APIError {
	return &APIError{Code: codeUnauthorized, Text: text}
}

const badCredentials = "unable to verify user credentials and/or request signature"

// asAPIError turns any handler error into an APIError; plain Go errors become
// internal errors (ApiServer.handleRequest's catch-all INTERNAL_ERROR) so they
// still reach the client in CloudStack's shape.
func asAPIError(err error) *APIError {
	var e *APIError
	if errors.As(err, &e) {
		return e
	}
	return internalError("%s", err.Error())
}

// errorBody is ExceptionResponse with Gson's field order. Departure: uuidList
// is always empty; CloudStack lists the proxy objects some exceptions carry
// (e.g. deleteSSHKeyPair's domainId).
type errorBody struct {
	UUIDList    []any  `json:"uuidList"`
	ErrorCode   int    `json:"errorcode"`
	CSErrorCode int    `json:"cserrorcode,omitempty"`
	ErrorText   string `json:"errortext"`
}

func (e *APIError) body() errorBody {
	return errorBody{UUIDList: []any{}, ErrorCode: e.Code, CSErrorCode: e.CSCode, ErrorText: e.Text}
}

// reply is everything the API endpoint sends back for one request.
type reply struct {
	status  int
	name    string // top-level key, e.g. "listzonesresponse"
	body    any    // the object under name
	raw     string // plain-text body (fault injection); replaces name/body
	rawJSON bool   // raw goes out as JSON's content type, as HttpUtils.writeHttpResponse does
	cookies []*http.Cookie
	header  http.Header
}

func okReply(name string, body any) *reply {
	return &reply{status: http.StatusOK, name: name, body: body}
}

func errorReply(name string, e *APIError) *reply {
	if e.responseName != "" {
		name = e.responseName
	}
	r := &reply{status: e.Code, name: name, body: e.body(), header: http.Header{}}
	if e.Code != codeUnauthorized {
		// ApiServlet sets X-Description on ServerApiExceptions (departure: here
		// also on the 400 and 531 it writes without one).
		r.header.Set("X-Description", oneLine(e.Text))
	}
	return r
}

func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// responseName is CloudStack's default response key (BaseCmd.getCommandName
// of most commands): the lowercased command name plus "response".
func responseName(command string) string {
	return strings.ToLower(command) + "response"
}

// jsonContentType is the default of ApiServer.JSONcontentType
// (json.content.type).
const jsonContentType = "application/json; charset=UTF-8"

// write is ApiResponseSerializer.toJSONSerializedString's envelope:
// {"<responsename>": body}.
func (r *reply) write(w http.ResponseWriter) {
	for k, vs := range r.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, c := range r.cookies {
		http.SetCookie(w, c)
	}
	if r.raw != "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if r.rawJSON {
			w.Header().Set("Content-Type", jsonContentType)
		}
		w.WriteHeader(r.status)
		_, _ = w.Write([]byte(r.raw))
		return
	}
	b, err := json.Marshal(map[string]any{r.name: r.body})
	if err != nil {
		b = []byte(`{"errorresponse":{"uuidList":[],"errorcode":530,"errortext":"response encoding failed"}}`)
		r.status = codeInternalError
	}
	w.Header().Set("Content-Type", jsonContentType)
	w.WriteHeader(r.status)
	_, _ = w.Write(b)
}

// csTime formats a time as CloudStack does (DateUtil "yyyy-MM-dd'T'HH:mm:ssZ").
func csTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05-0700")
}

// success is SuccessResponse.
func success() map[string]any { return map[string]any{"success": true} }

func notImplemented(text string) *APIError {
	return &APIError{Code: codeUnsupported, CSCode: csUnavailableCmd, Text: text}
}

// permissionDenied is a PermissionDeniedException: 531 with 4365.
func permissionDenied(format string, args ...any) *APIError {
	return &APIError{Code: codeAccountError, CSCode: csPermissionDenied, Text: fmt.Sprintf(format, args...)}
}

package kernel

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
	CodeParamError     = 431
	CodeUnsupported    = 432
	codeLimitExceeded  = 429
	CodeInternalError  = 530
	CodeAccountError   = 531
	codeResourceLimit  = 532
	CodeCapacity       = 533
	codeUnavailable    = 534
	codeAllocation     = 535
	codeInUse          = 536
	CodeRuleConflict   = 537
)

// cserrorcode values: the Java exception class behind an error
// (CSExceptionErrorCode).
const (
	csCloudRuntime       = 4250
	csAccountLimit       = 4280
	CsInsufficientCap    = 4325
	csInvalidParam       = 4350
	csRuleConflict       = 4360
	CsPermissionDenied   = 4365
	csResourceAlloc      = 4370
	csResourceInUse      = 4375
	csResourceUnavail    = 4380
	csRequestLimit       = 4545
	CsUnavailableCmd     = 4555
	CsServerAPIException = 9999 // a bare ServerApiException
)

// defaultCSCode is the cserrorcode CloudStack typically pairs with an HTTP
// code, used when a fault rule (a simulator feature, no Java) names only the
// HTTP code: the code of the exception ApiServer.handleRequest wraps for it.
func defaultCSCode(code int) int {
	switch code {
	case CodeParamError:
		return csInvalidParam
	case CodeUnsupported:
		return CsUnavailableCmd
	case codeLimitExceeded:
		return csRequestLimit
	case CodeAccountError:
		return CsPermissionDenied
	case codeResourceLimit:
		return csAccountLimit
	case CodeCapacity:
		return CsInsufficientCap
	case codeUnavailable:
		return csResourceUnavail
	case codeAllocation:
		return csResourceAlloc
	case codeInUse:
		return csResourceInUse
	case CodeRuleConflict:
		return csRuleConflict
	case codeUnauthorized:
		return 0
	}
	return csCloudRuntime
}

// DefaultErrorText is ExceptionResponse's text when none is set.
const DefaultErrorText = "Command failed due to Internal Server Error"

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

// ParamError is an InvalidParameterValueException: 431 with cserrorcode 4350.
func ParamError(format string, args ...any) *APIError {
	return &APIError{Code: CodeParamError, CSCode: csInvalidParam, Text: fmt.Sprintf(format, args...)}
}

// ServerParamError is a ServerApiException(PARAM_ERROR) without a cause: 431
// with 9999 (its constructor's CSExceptionErrorCode), what
// ParamProcessWorker.processParameters throws for missing and bad values.
func ServerParamError(format string, args ...any) *APIError {
	return &APIError{Code: CodeParamError, CSCode: CsServerAPIException, Text: fmt.Sprintf(format, args...)}
}

// InternalError is a CloudRuntimeException: 530 with 4250.
func InternalError(format string, args ...any) *APIError {
	return &APIError{Code: CodeInternalError, CSCode: csCloudRuntime, Text: fmt.Sprintf(format, args...)}
}

// unauthorized is the answer to every failed signature or key check.
func unauthorized(text string) *APIError {
	return &APIError{Code: codeUnauthorized, Text: text}
}

// BadCredentials is ApiServer.verifyRequest's refusal text.
const BadCredentials = "unable to verify user credentials and/or request signature"

// AsAPIError turns any handler error into an APIError; plain Go errors become
// internal errors (ApiServer.handleRequest's catch-all INTERNAL_ERROR) so they
// still reach the client in CloudStack's shape.
func AsAPIError(err error) *APIError {
	var e *APIError
	if errors.As(err, &e) {
		return e
	}
	return InternalError("%s", err.Error())
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

// Reply is everything the API endpoint sends back for one request.
type Reply struct {
	Status  int
	name    string // top-level key, e.g. "listzonesresponse"
	body    any    // the object under name
	Raw     string // plain-text body (fault injection); replaces name/body
	rawJSON bool   // raw goes out as JSON's content type, as HttpUtils.writeHttpResponse does
	cookies []*http.Cookie
	header  http.Header
}

func okReply(name string, body any) *Reply {
	return &Reply{Status: http.StatusOK, name: name, body: body}
}

func errorReply(name string, e *APIError) *Reply {
	if e.responseName != "" {
		name = e.responseName
	}
	r := &Reply{Status: e.Code, name: name, body: e.body(), header: http.Header{}}
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

// ResponseName is CloudStack's default response key (BaseCmd.getCommandName
// of most commands): the lowercased command name plus "response".
func ResponseName(command string) string {
	return strings.ToLower(command) + "response"
}

// JSONContentType is the default of ApiServer.JSONcontentType
// (json.content.type).
const JSONContentType = "application/json; charset=UTF-8"

// write is ApiResponseSerializer.toJSONSerializedString's envelope:
// {"<responsename>": body}.
func (r *Reply) write(w http.ResponseWriter) {
	for k, vs := range r.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, c := range r.cookies {
		http.SetCookie(w, c)
	}
	if r.Raw != "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if r.rawJSON {
			w.Header().Set("Content-Type", JSONContentType)
		}
		w.WriteHeader(r.Status)
		_, _ = w.Write([]byte(r.Raw))
		return
	}
	b, err := json.Marshal(map[string]any{r.name: r.body})
	if err != nil {
		b = []byte(`{"errorresponse":{"uuidList":[],"errorcode":530,"errortext":"response encoding failed"}}`)
		r.Status = CodeInternalError
	}
	w.Header().Set("Content-Type", JSONContentType)
	w.WriteHeader(r.Status)
	_, _ = w.Write(b)
}

// CsTime formats a time as CloudStack does (DateUtil "yyyy-MM-dd'T'HH:mm:ssZ").
func CsTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05-0700")
}

// Success is SuccessResponse.
func Success() map[string]any { return map[string]any{"success": true} }

// NotImplemented is the answer for what the simulator does not do (432, as
// for a command CloudStack does not know).
func NotImplemented(text string) *APIError {
	return &APIError{Code: CodeUnsupported, CSCode: CsUnavailableCmd, Text: text}
}

// PermissionDenied is a PermissionDeniedException: 531 with 4365.
func PermissionDenied(format string, args ...any) *APIError {
	return &APIError{Code: CodeAccountError, CSCode: CsPermissionDenied, Text: fmt.Sprintf(format, args...)}
}

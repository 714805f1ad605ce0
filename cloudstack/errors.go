package cloudstack

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// APIError is CloudStack's own refusal: its HTTP error code, the exception
// class code, and its text.
type APIError struct {
	Command     string
	ErrorCode   int
	CSErrorCode int
	Text        string
	JobID       string // set when an async job failed
	// Interrupted is set when a management server restart cut the job
	// short (IsJobInterrupted).
	Interrupted bool
}

func (e *APIError) Error() string {
	job := ""
	if e.JobID != "" {
		job = " (job " + e.JobID + ")"
	}
	return fmt.Sprintf("CloudStack %s failed%s: %s (error %d, cserrorcode %d)",
		e.Command, job, e.Text, e.ErrorCode, e.CSErrorCode)
}

// CloudStack's ApiErrorCode values the predicates below classify by; cpi/
// asks the predicates, never the codes.
const (
	codeUnauthorized         = 401
	codeParamError           = 431
	codeUnsupportedAction    = 432
	codePermissionDenied     = 531
	codeInsufficientCapacity = 533
	codeResourceUnavailable  = 534
	codeResourceAllocation   = 535
)

// IsCapacity says the error is CloudStack running out of room, which a retry
// somewhere else or later may get past.
func (e *APIError) IsCapacity() bool {
	switch e.ErrorCode {
	case codeInsufficientCapacity, codeResourceUnavailable, codeResourceAllocation:
		return true
	}
	return false
}

// IsCapacity says err is CloudStack running out of room (APIError.IsCapacity).
func IsCapacity(err error) bool {
	var api *APIError
	return errors.As(err, &api) && api.IsCapacity()
}

// IsJobInterrupted says a restart of CloudStack's management server cut
// the job short: on start, AsyncJobManagerImpl.cleanupLeftOverJobs fails the
// jobs the server had running and takes what they worked on out of its
// transitional state (cleanupResources), so the same call again may well
// succeed.
func IsJobInterrupted(err error) bool {
	var api *APIError
	return errors.As(err, &api) && api.Interrupted
}

// IsJobTimeout says CloudStack's job did not finish in time and may still
// finish (JobTimeoutError).
func IsJobTimeout(err error) bool {
	var timeout *JobTimeoutError
	return errors.As(err, &timeout)
}

// IsUnreachable says no answer came from CloudStack (UnreachableError): the
// request may or may not have been acted on.
func IsUnreachable(err error) bool {
	var unreachable *UnreachableError
	return errors.As(err, &unreachable)
}

// IsNoSuchEntity says CloudStack refused a UUID parameter because nothing
// (not even a removed row) has that UUID: for a lookup by id, absence.
func IsNoSuchEntity(err error) bool {
	var api *APIError
	return errors.As(err, &api) && api.ErrorCode == codeParamError &&
		strings.Contains(api.Text, "entity does not exist")
}

// csPermissionDenied is PermissionDeniedException's cserrorcode
// (CSExceptionErrorCode).
const csPermissionDenied = 4365

// IsPermissionDenied says CloudStack refused the caller the action: a
// PermissionDeniedException (531), e.g. destroyVirtualMachine's "Parameter
// expunge can be passed by Admin only. Or when the
// allow.user.expunge.recover.vm key is set." (UserVmManagerImpl.destroyVm),
// or a command the caller's role may not call (432).
func IsPermissionDenied(err error) bool {
	var api *APIError
	return errors.As(err, &api) && (api.ErrorCode == codePermissionDenied || api.ErrorCode == codeUnsupportedAction ||
		api.CSErrorCode == csPermissionDenied)
}

// IsExpungeRefused says CloudStack will not let this account expunge (or
// recover) a VM: UserVmManagerImpl.destroyVm ("Parameter expunge can be
// passed by Admin only. Or when the allow.user.expunge.recover.vm key is
// set.") and expungeVm ("Expunging a vm can only be done by an Admin. Or
// when the allow.user.expunge.recover.vm key is set.") throw a
// PermissionDeniedException inside the job, which ApiAsyncJobDispatcher
// reports as a plain 530: the setting's name in the text is the signal. A
// role without expungeVirtualMachine gets a 432, or any other permission
// refusal.
func IsExpungeRefused(err error) bool {
	var api *APIError
	return IsPermissionDenied(err) ||
		(errors.As(err, &api) && strings.Contains(api.Text, "allow.user.expunge.recover.vm"))
}

// IsGuestIPUnavailable says deployVirtualMachine could not give a NIC its
// guest address, the answer when a requested address is taken (a Destroyed
// VM keeps its addresses until it is expunged) or the network is full. Both
// are 533s, with the text of the network's guru:
//   - Isolated (and L2-less VPC tier) networks: GuestNetworkGuru.allocate's
//     InsufficientVirtualNetworkCapacityException "Unable to acquire Guest IP
//     address for network ...";
//   - Shared networks: DirectNetworkGuru.allocate takes the address from the
//     network's VLAN IP range (IpAddressManagerImpl.allocateDirectIp, then
//     fetchNewPublicIp with the requested address), whose
//     InsufficientAddressCapacityException says "Insufficient address
//     capacity".
func IsGuestIPUnavailable(err error) bool {
	var api *APIError
	return errors.As(err, &api) && api.ErrorCode == codeInsufficientCapacity &&
		(strings.Contains(api.Text, "Unable to acquire Guest IP address for network") ||
			strings.Contains(api.Text, "Insufficient address capacity"))
}

// CredentialsRefusedError is a 401: wrong keys, a bad signature, or a clock
// so far off that the signature expired.
type CredentialsRefusedError struct {
	Endpoint string
	Command  string
}

func (e *CredentialsRefusedError) Error() string {
	return fmt.Sprintf("CloudStack at %s refused the credentials for %s (401): check cloudstack.api_key and "+
		"cloudstack.secret_access_key, and that this machine's clock is right", e.Endpoint, e.Command)
}

// UnreachableError means no answer came from the endpoint.
type UnreachableError struct {
	Endpoint string
	Err      error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("CloudStack at %s could not be reached: %v", e.Endpoint, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// TLSError means the endpoint's certificate was not trusted.
type TLSError struct {
	Endpoint string
	Err      error
}

func (e *TLSError) Error() string {
	return fmt.Sprintf("TLS connection to CloudStack at %s failed: %v (trust its CA with cloudstack.ca_cert)",
		e.Endpoint, e.Err)
}

func (e *TLSError) Unwrap() error { return e.Err }

// JobTimeoutError means CloudStack did not finish a job in time; the job may
// still finish, so its id is kept for the operator.
type JobTimeoutError struct {
	Command string
	JobID   string
	Waited  time.Duration
	// Throttled is set when the job's last polls were refused by
	// CloudStack's API throttle: the job may have finished unseen.
	Throttled *ThrottledError
}

func (e *JobTimeoutError) Error() string {
	if e.Throttled != nil {
		return fmt.Sprintf("CloudStack job %s of %s was not seen to finish within %s: %v; it may still complete",
			e.JobID, e.Command, e.Waited.Round(time.Second), e.Throttled)
	}
	return fmt.Sprintf("CloudStack job %s of %s did not finish within %s; it may still complete",
		e.JobID, e.Command, e.Waited.Round(time.Second))
}

// Unwrap gives the throttle's refusal, when that is why the job was not seen to end.
func (e *JobTimeoutError) Unwrap() error {
	if e.Throttled == nil {
		return nil
	}
	return e.Throttled
}

// cloudstack-go flattens CloudStack errors into this text; the codes survive
// only there.
var csErrorText = regexp.MustCompile(`^CloudStack API error (\d+) \(CSExceptionErrorCode: (-?\d+)\): (?s)(.*)$`)

// fail is the one place errors from cloudstack-go pass through: it types
// them and strips the request URL, which holds the API key and signature.
func (c *Client) fail(command string, err error) error {
	if err == nil {
		return nil
	}
	if typed := alreadyTyped(err); typed != nil {
		return typed
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if isTLSError(ue.Err) {
			return &TLSError{Endpoint: c.endpoint, Err: ue.Err}
		}
		if !isDialError(ue.Err) {
			if plain := c.plainHTTPToTLS(ue.Err); plain != nil {
				return plain
			}
		}
		return &UnreachableError{Endpoint: c.endpoint, Err: ue.Err}
	}
	if m := csErrorText.FindStringSubmatch(err.Error()); m != nil {
		code, _ := strconv.Atoi(m[1])
		cscode, _ := strconv.Atoi(m[2])
		if code == codeUnauthorized {
			return &CredentialsRefusedError{Endpoint: c.endpoint, Command: command}
		}
		return &APIError{Command: command, ErrorCode: code, CSErrorCode: cscode, Text: m[3]}
	}
	if plain := c.plainHTTPToTLS(err); plain != nil {
		return plain
	}
	// Text, not a wrap: every error of cloudstack-go this layer can name was
	// named above; what is left is for the operator to read, not for callers to match.
	return fmt.Errorf("CloudStack %s at %s: unexpected answer: %v", command, c.endpoint, err) //nolint:errorlint // deliberately not wrapped, see above
}

// alreadyTyped finds an error this package made inside what cloudstack-go
// or net/http wrapped around it.
func alreadyTyped(err error) error {
	var tlsErr *TLSError
	var unreachable *UnreachableError
	var api *APIError
	var timeout *JobTimeoutError
	var plain *PlainHTTPError
	var throttle *ThrottledError
	switch {
	case errors.As(err, &timeout): // before the throttle it may wrap
		return timeout
	case errors.As(err, &throttle):
		return throttle
	case errors.As(err, &plain):
		return plain
	case errors.As(err, &tlsErr):
		return tlsErr
	case errors.As(err, &unreachable):
		return unreachable
	case errors.As(err, &api):
		return api
	}
	return nil
}

func isTLSError(err error) bool {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	return errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &verify) || errors.As(err, &record)
}

// NotActedOn says CloudStack certainly did not act on a mutating request
// that failed: it refused the request itself (an async command's checks
// run before its job is queued, so no job exists), refused the
// credentials or throttled every try (the throttle answers before the
// command runs, see throttle.go), or was never reached (the dial or the
// TLS handshake failed). Anything else (a lost answer, a failed job, a failed poll, a job
// timeout) may have left what the command creates, and a MarkError says a
// create command made the resource it failed to tag.
func NotActedOn(err error) bool {
	if isMarkError(err) {
		return false
	}
	var api *APIError
	var creds *CredentialsRefusedError
	var tlsErr *TLSError
	var plain *PlainHTTPError
	var unreachable *UnreachableError
	var throttle *ThrottledError
	switch {
	case errors.As(err, &api):
		return api.JobID == "" && api.Command != "queryAsyncJobResult"
	case errors.As(err, &throttle):
		return !IsJobTimeout(err) && throttle.Command != "queryAsyncJobResult"
	case errors.As(err, &creds), errors.As(err, &tlsErr), errors.As(err, &plain):
		return true
	case errors.As(err, &unreachable):
		return isDialError(unreachable.Err)
	}
	return false
}

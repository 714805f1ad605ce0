package cpi

import (
	"errors"
	"fmt"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// Error is a CPI error with the Bosh::Clouds type the director acts on;
// bosh-cpi-go's dispatcher reads Type and CanRetry.
type Error struct {
	kind  string
	retry bool
	err   error
}

func (e *Error) Error() string { return e.err.Error() }
func (e *Error) Unwrap() error { return e.err }

// Type is the director's class for the error, e.g. Bosh::Clouds::VMNotFound.
func (e *Error) Type() string { return "Bosh::Clouds::" + e.kind }

// CanRetry tells the director whether the same call may succeed if tried again.
func (e *Error) CanRetry() bool { return e.retry }

// The error types of the CPI contract (bosh-director lib/cloud/errors.rb).
func cloudError(err error) error {
	if err == nil {
		return nil
	}
	return &Error{kind: "CloudError", err: err}
}

func vmNotFound(cid string) error {
	return &Error{kind: "VMNotFound", err: fmt.Errorf("VM %s not found in CloudStack", cid)}
}

// wrap gives an error from the CloudStack layer the context an operator
// needs and the type the director expects.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	var typed *Error
	if errors.As(err, &typed) {
		return err
	}
	msg := fmt.Sprintf(format, args...)
	return cloudError(fmt.Errorf("%s: %w", msg, err))
}

// leftBehind is the error of a call that failed with something of its own
// still in CloudStack: what is there, and never ok_to_retry, since a retry
// would add another.
func leftBehind(failed error, format string, args ...any) error {
	return &Error{kind: kindOf(failed), err: fmt.Errorf("%w; %s", failed, fmt.Sprintf(format, args...))}
}

// nothingLeft is the error of a call that failed but left nothing behind:
// a retry is safe.
func nothingLeft(failed error, format string, args ...any) error {
	return &Error{kind: kindOf(failed), retry: true, err: fmt.Errorf("%w; %s", failed, fmt.Sprintf(format, args...))}
}

func kindOf(err error) string {
	var typed *Error
	if errors.As(err, &typed) {
		return typed.kind
	}
	return "CloudError"
}

// vmCreationRefused types a create_vm failure of its input (cloud properties,
// networks, offerings): VMCreationFailed, which the director must not retry.
func vmCreationRefused(err error) error {
	if err == nil {
		return nil
	}
	var typed *Error
	if errors.As(err, &typed) {
		return err
	}
	return &Error{kind: "VMCreationFailed", retry: false, err: err}
}

// vmCreationFailed types a create_vm failure: capacity and time-outs are
// worth retrying; bad input is not.
func vmCreationFailed(err error) error {
	var typed *Error
	if errors.As(err, &typed) {
		return err
	}
	retry := cloudstack.IsJobTimeout(err) || cloudstack.IsCapacity(err)
	if cloudstack.IsGuestIPUnavailable(err) {
		// A capacity code, but an immediate retry will not free the
		// address (explainAddress said who holds it).
		retry = false
	}
	return &Error{kind: "VMCreationFailed", retry: retry, err: err}
}

package cron

import (
	"errors"
	"net/http"

	"github.com/svc-framework/svc/rpc"
)

// Business codes of the cron store (wire-runtime §1.4). All are answered with HTTP 200.
const (
	ErrCodeScheduleNotFound = 2700
	ErrCodeScheduleExists   = 2701
	ErrCodeScheduleDisabled = 2702
	ErrCodeTriggerInvalid   = 2703
	ErrCodeJobNotRegistered = 2704
	ErrCodeStoreDisabled    = 2705
	ErrCodeScheduleInvalid  = 2706
)

// Error templates of the cron store (wire-runtime §1.4). ErrTriggerInvalid and
// ErrScheduleInvalid carry the reason in the {{reason}} placeholder: derive copies with
// WithArgs("reason", …) or through the invalid helpers below; compare with errors.Is.
var (
	// ErrScheduleNotFound: no schedule has the name (2700).
	ErrScheduleNotFound = rpc.NewError(ErrCodeScheduleNotFound, http.StatusOK, "cron_schedule_not_found")
	// ErrScheduleExists: another schedule already has the name (2701).
	ErrScheduleExists = rpc.NewError(ErrCodeScheduleExists, http.StatusOK, "cron_schedule_exists")
	// ErrScheduleDisabled: trigger_now on a paused schedule (2702).
	ErrScheduleDisabled = rpc.NewError(ErrCodeScheduleDisabled, http.StatusOK, "cron_schedule_disabled")
	// ErrTriggerInvalid: the trigger does not compile (2703); the reason is one of the
	// ErrTrigger* sentinels below.
	ErrTriggerInvalid = rpc.NewError(ErrCodeTriggerInvalid, http.StatusOK, "cron_trigger_invalid")
	// ErrJobNotRegistered: no job handler of that name on the answering node (2704).
	ErrJobNotRegistered = rpc.NewError(ErrCodeJobNotRegistered, http.StatusOK, "cron_job_not_registered")
	// ErrStoreDisabled: svc.cron.store.enabled is false (2705).
	ErrStoreDisabled = rpc.NewError(ErrCodeStoreDisabled, http.StatusOK, "cron_store_disabled")
	// ErrScheduleInvalid: the schedule breaks a rule of wire-runtime §1.4 (2706).
	ErrScheduleInvalid = rpc.NewError(ErrCodeScheduleInvalid, http.StatusOK, "cron_schedule_invalid")
)

// Reasons of ErrTriggerInvalid (wire-runtime §1.5). Compile returns them; the resources turn
// them into ErrTriggerInvalid with the reason as the message argument.
var (
	ErrTriggerKindUnknown        = errors.New("unknown trigger kind")
	ErrTriggerExprRequired       = errors.New("cron expression required")
	ErrTriggerExprInvalid        = errors.New("invalid cron expression")
	ErrTriggerTimezoneInvalid    = errors.New("invalid time zone")
	ErrTriggerIntervalTooShort   = errors.New("interval shorter than 1s")
	ErrTriggerIntervalTooLong    = errors.New("interval too long")
	ErrTriggerFireTimeRequired   = errors.New("fire time required")
	ErrTriggerFieldsConflict     = errors.New("fields of another trigger kind set")
	ErrTriggerIntervalNotWholeMs = errors.New("interval not a whole number of milliseconds")
)

// Reasons of ErrScheduleInvalid (wire-runtime §1.4).
var (
	ErrNameRequired    = errors.New("name required")
	ErrNameTooLong     = errors.New("name exceeds 128 characters")
	ErrTimeoutNegative = errors.New("timeout negative")
	ErrWindowInverted  = errors.New("window must end after it starts")
	ErrNeverFires      = errors.New("never fires")
	ErrPolicyUnknown   = errors.New("unknown policy")
)

// Startup errors of the job registry (wire-runtime §1.1).
var (
	// ErrJobNameEmpty: a job handler has an empty name.
	ErrJobNameEmpty = errors.New("cron: job handler name is empty")
	// ErrJobNameTooLong: a job handler name exceeds 128 characters.
	ErrJobNameTooLong = errors.New("cron: job handler name exceeds 128 characters")
	// ErrJobDuplicate: two job handlers share a name.
	ErrJobDuplicate = errors.New("cron: duplicate job handler name")
	// ErrJobNil: a nil job handler was registered.
	ErrJobNil = errors.New("cron: nil job handler")
)

// invalidTrigger turns a trigger reason into the 2703 error.
func invalidTrigger(reason error) *rpc.Error {
	return ErrTriggerInvalid.WithArgs("reason", reason.Error()).Wrap(reason)
}

// invalidSchedule turns a schedule reason into the 2706 error.
func invalidSchedule(reason error) *rpc.Error {
	return ErrScheduleInvalid.WithArgs("reason", reason.Error()).Wrap(reason)
}

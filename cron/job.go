package cron

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// maxNameRunes bounds schedule and job names (wire-runtime §1.1, §1.4).
const maxNameRunes = 128

// Execution is what a job handler receives for one run (wire-runtime §1.1).
type Execution struct {
	// RunID is the crn_run row of this run.
	RunID string
	// ScheduleID and ScheduleName identify the schedule that fired.
	ScheduleID   string
	ScheduleName string
	// JobName is the handler's name.
	JobName string
	// ScheduledAt is the logical fire time (not the moment the run started).
	ScheduledAt time.Time
	// Params are the schedule's params verbatim; nil when the schedule has none.
	Params json.RawMessage
}

// BindParams decodes the schedule's params into v; absent or null params leave v unchanged.
func (e Execution) BindParams(v any) error {
	if len(bytes.TrimSpace(e.Params)) == 0 || bytes.Equal(bytes.TrimSpace(e.Params), []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(e.Params, v); err != nil {
		return fmt.Errorf("cron: decode params of job %q: %w", e.JobName, err)
	}
	return nil
}

// JobHandler is host code a schedule runs by name. Execute's error journals the run failed;
// a panic is recovered and journaled failed too. Execute must honour ctx: it ends at the run's
// timeout and at shutdown.
type JobHandler interface {
	Name() string
	Execute(ctx context.Context, e Execution) error
}

// Job returns a JobHandler named name that calls fn.
func Job(name string, fn func(ctx context.Context, e Execution) error) JobHandler {
	return funcJob{name: name, fn: fn}
}

// TypedJob returns a JobHandler that decodes the schedule's params into a P before calling fn
// (absent or null params give P's zero value). When decoding fails fn is not called and the run
// is journaled failed with the decode error (wire-runtime §1.1).
func TypedJob[P any](name string, fn func(ctx context.Context, e Execution, p P) error) JobHandler {
	return funcJob{name: name, fn: func(ctx context.Context, e Execution) error {
		var p P
		if err := e.BindParams(&p); err != nil {
			return err
		}
		return fn(ctx, e, p)
	}}
}

// ParamsChecker is implemented by a JobHandler that can tell, from a schedule's params alone,
// that every run would fail (the built-in jobs: a URL the host policy refuses, a reserved event
// type). Create, update, preview_fires and default schedules call it after the other checks;
// its error refuses the schedule with 2706 and is the error's reason. params is nil when the
// schedule has none.
type ParamsChecker interface {
	CheckParams(params json.RawMessage) error
}

// ParamsDescriber is implemented by a JobHandler that tells people editing schedules what its
// params look like: describe_jobs answers it and the console's schedule form shows it. A job
// without it is described by its name only.
type ParamsDescriber interface {
	DescribeParams() ParamsDoc
}

// ParamsDoc describes a job's params.
type ParamsDoc struct {
	// Required reports whether a schedule of the job needs params at all (its runs fail without).
	Required bool `json:"paramsRequired"`
	// Schema is a JSON Schema (draft 2020-12) of the params object; nil when not given.
	Schema json.RawMessage `json:"paramsSchema,omitempty"`
	// Example is a valid params value; nil when not given.
	Example json.RawMessage `json:"paramsExample,omitempty"`
}

type funcJob struct {
	name string
	fn   func(ctx context.Context, e Execution) error
}

func (j funcJob) Name() string                                   { return j.name }
func (j funcJob) Execute(ctx context.Context, e Execution) error { return j.fn(ctx, e) }

var _ JobHandler = funcJob{}

// Registry is this node's job handlers by name. A node claims only schedules whose job it has
// registered, and list_jobs answers with this registry (wire-runtime §1.1). It is read-only after
// NewRegistry, so it is safe for concurrent use.
type Registry struct {
	byName map[string]JobHandler
	names  []string
}

// NewRegistry checks and indexes handlers: a nil handler (ErrJobNil), an empty name
// (ErrJobNameEmpty), a name over 128 characters (ErrJobNameTooLong) or a name used twice
// (ErrJobDuplicate) fails, as it fails the original's startup.
func NewRegistry(handlers ...JobHandler) (*Registry, error) {
	r := &Registry{byName: make(map[string]JobHandler, len(handlers))}
	for i, h := range handlers {
		if h == nil {
			return nil, fmt.Errorf("job handler %d: %w", i, ErrJobNil)
		}
		name := h.Name()
		switch {
		case name == "":
			return nil, fmt.Errorf("job handler %d: %w", i, ErrJobNameEmpty)
		case utf8.RuneCountInString(name) > maxNameRunes:
			return nil, fmt.Errorf("job handler %q: %w", name, ErrJobNameTooLong)
		case r.byName[name] != nil:
			return nil, fmt.Errorf("job handler %q: %w", name, ErrJobDuplicate)
		}
		r.byName[name] = h
		r.names = append(r.names, name)
	}
	slices.Sort(r.names)
	return r, nil
}

// Get returns the handler named name, or nil.
func (r *Registry) Get(name string) JobHandler { return r.byName[name] }

// Names returns the registered job names, sorted. The slice is shared: do not modify it.
func (r *Registry) Names() []string { return r.names }

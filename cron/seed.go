package cron

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// defaultScheduler is a job handler that ships a default schedule.
type defaultScheduler interface {
	DefaultSchedule() Spec
}

// WithDefaultSchedule returns h shipping spec as its default schedule (wire-runtime §1.1): when
// the store starts, the schedule is created unless one of its name exists (an operator's edits
// are kept). An empty spec name or job name falls back to the job's name. A spec that does not
// validate fails startup.
func WithDefaultSchedule(h JobHandler, spec Spec) JobHandler {
	return seededJob{JobHandler: h, spec: spec}
}

type seededJob struct {
	JobHandler
	spec Spec
}

func (j seededJob) DefaultSchedule() Spec { return j.spec }

// CheckParams forwards to the wrapped handler's ParamsChecker, if it has one.
func (j seededJob) CheckParams(params json.RawMessage) error {
	if c, ok := j.JobHandler.(ParamsChecker); ok {
		return c.CheckParams(params)
	}
	return nil
}

var (
	_ JobHandler       = seededJob{}
	_ defaultScheduler = seededJob{}
	_ ParamsChecker    = seededJob{}
	_ ParamsDescriber  = seededJob{}
)

// seed creates the default schedules that do not exist yet; it runs at start, after the
// migrations and before the workers.
func (s *Service) seed(ctx context.Context) error {
	for _, name := range s.jobs.Names() {
		ds, ok := s.jobs.Get(name).(defaultScheduler)
		if !ok {
			continue
		}
		spec := ds.DefaultSchedule()
		spec.Name = orDefault(spec.Name, name)
		spec.JobName = orDefault(spec.JobName, name)
		if _, err := s.Create(ctx, "system", spec); err != nil && !errors.Is(err, ErrScheduleExists) {
			return fmt.Errorf("cron: default schedule %q of job %q: %w", spec.Name, name, err)
		}
	}
	return nil
}

// DescribeParams forwards to the wrapped handler's ParamsDescriber, if it has one.
func (j seededJob) DescribeParams() ParamsDoc {
	if d, ok := j.JobHandler.(ParamsDescriber); ok {
		return d.DescribeParams()
	}
	return ParamsDoc{}
}

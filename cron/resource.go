package cron

import (
	"context"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// Names of the resources this module mounts on /api (spec §4.1).
const (
	ScheduleResource = "sys/cron/schedule"
	RunResource      = "sys/cron/run"
)

// Permission tokens of the sys/cron operations (spec §4.1).
const (
	PermScheduleQuery  = "cron.schedule.query"
	PermScheduleManage = "cron.schedule.manage"
	PermRunQuery       = "cron.run.query"
)

// previewCount is how many upcoming fires get and preview_fires list (wire-runtime §1.4).
const previewCount = 5

// ScheduleResource is sys/cron/schedule: queries need cron.schedule.query, mutations
// cron.schedule.manage and are audited. With the store disabled it has no operations (spec §1).
func (s *Service) ScheduleResource() rpc.Resource {
	if !s.cfg.Enabled {
		return rpc.Resource{Name: ScheduleResource}
	}
	q := rpc.RequiredPermission(PermScheduleQuery)
	m := rpc.RequiredPermission(PermScheduleManage)
	return rpc.Resource{Name: ScheduleResource, Ops: []rpc.Op{
		rpc.Handle("find_page", s.findSchedules, q),
		rpc.Handle("get", s.getSchedule, q),
		rpc.Handle("list_jobs", s.listJobs, q),
		rpc.Handle("describe_jobs", s.describeJobs, q),
		rpc.Handle("preview_fires", s.previewFires, q),
		rpc.Handle("create", s.saveSchedule(s.Create), m, rpc.Audit()),
		rpc.Handle("update", s.saveSchedule(s.Update), m, rpc.Audit()),
		rpc.Handle("delete", s.nameAction(s.deleteByName), m, rpc.Audit()),
		rpc.Handle("pause", s.nameAction(s.pauseByName), m, rpc.Audit()),
		rpc.Handle("resume", s.nameAction(s.resumeByName), m, rpc.Audit()),
		rpc.Handle("trigger_now", s.nameAction(s.triggerByName), m, rpc.Audit()),
	}}
}

// GetResult is get's data: the schedule and its next fires (none while paused or spent).
type GetResult struct {
	Schedule ScheduleJSON `json:"schedule"`
	FiresJSON
}

func (s *Service) getSchedule(ctx context.Context, _ rpc.Call, p NameParams) (*GetResult, error) {
	sch, err := s.Get(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	out := &GetResult{Schedule: s.wire.schedule(sch), FiresJSON: s.wire.fires(nil)}
	if tm, err := sch.Timing(); err == nil && sch.IsEnabled && !sch.NextFireAt.IsZero() {
		fires := append([]time.Time{sch.NextFireAt}, tm.NextN(sch.NextFireAt, previewCount-1)...)
		out.FiresJSON = s.wire.fires(fires)
	}
	return out, nil
}

func (s *Service) listJobs(context.Context, rpc.Call, rpc.NoParams) ([]string, error) {
	return append([]string{}, s.jobs.Names()...), nil
}

// JobInfo is one job of describe_jobs: its name and, when the handler describes them
// (ParamsDescriber), its params' schema and an example.
type JobInfo struct {
	Name string `json:"name"`
	ParamsDoc
}

// describeJobs answers this node's jobs, sorted by name like list_jobs, each with what it says of
// its params (svc's addition: list_jobs keeps the original's string[]).
func (s *Service) describeJobs(context.Context, rpc.Call, rpc.NoParams) ([]JobInfo, error) {
	names := s.jobs.Names()
	out := make([]JobInfo, len(names))
	for i, name := range names {
		out[i].Name = name
		if d, ok := s.jobs.Get(name).(ParamsDescriber); ok {
			out[i].ParamsDoc = d.DescribeParams()
		}
	}
	return out, nil
}

// previewFires validates like a save and lists the next fires from now.
func (s *Service) previewFires(_ context.Context, _ rpc.Call, p PreviewParams) (*FiresJSON, error) {
	tr, err := s.wire.trigger(p.Trigger)
	if err != nil {
		return nil, err
	}
	win, err := s.wire.window(p.WindowParams)
	if err != nil {
		return nil, err
	}
	now := ms(s.clock())
	tm, err := Compile(tr, win, now)
	if err != nil {
		if isTriggerReason(err) {
			return nil, invalidTrigger(err)
		}
		return nil, invalidSchedule(err)
	}
	out := s.wire.fires(tm.NextN(now, previewCount))
	return &out, nil
}

// saveSchedule adapts Create or Update: both decode ScheduleParams and answer the schedule.
func (s *Service) saveSchedule(save func(ctx context.Context, by string, spec Spec) (*Schedule, error)) func(context.Context, rpc.Call, ScheduleParams) (*ScheduleJSON, error) {
	return func(ctx context.Context, c rpc.Call, p ScheduleParams) (*ScheduleJSON, error) {
		spec, err := s.wire.spec(p)
		if err != nil {
			return nil, err
		}
		sch, err := save(ctx, c.Principal.ID, spec)
		if err != nil {
			return nil, err
		}
		out := s.wire.schedule(sch)
		return &out, nil
	}
}

// nameAction adapts an action on a schedule name that answers no data.
func (s *Service) nameAction(fn func(ctx context.Context, by, name string) error) func(context.Context, rpc.Call, NameParams) (*struct{}, error) {
	return func(ctx context.Context, c rpc.Call, p NameParams) (*struct{}, error) {
		return nil, fn(ctx, c.Principal.ID, p.Name)
	}
}

func (s *Service) deleteByName(ctx context.Context, _, name string) error { return s.Delete(ctx, name) }
func (s *Service) pauseByName(ctx context.Context, by, name string) error {
	return s.Pause(ctx, by, name)
}
func (s *Service) resumeByName(ctx context.Context, by, name string) error {
	return s.Resume(ctx, by, name)
}
func (s *Service) triggerByName(ctx context.Context, _, name string) error {
	return s.TriggerNow(ctx, name)
}

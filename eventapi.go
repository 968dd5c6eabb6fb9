package svc

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/rpc"
)

// The event bus's operator resources on /api (svc additions, issue #36): the package event
// answers the data, this file maps it to the wire (rpc imports no bus).
const (
	// EventResource is the bus's transports, routes and streams.
	EventResource = "sys/event"
	// OutboxResource is the outbox's rows and dead letters.
	OutboxResource = "sys/event/outbox"
	// EventQueryPermission is required by every read action of sys/event and sys/event/outbox.
	EventQueryPermission = "sys.event.query"
	// EventManagePermission is required by replay and discard (audited).
	EventManagePermission = "sys.event.manage"
)

// eventResources are sys/event (get_overview, get_streams) and sys/event/outbox (find_page,
// get, replay, discard) over bus.
func eventResources(bus *event.Bus) []rpc.Resource {
	api := eventAPI{bus: bus}
	query, manage := rpc.RequiredPermission(EventQueryPermission), rpc.RequiredPermission(EventManagePermission)
	return []rpc.Resource{
		{Name: EventResource, Ops: []rpc.Op{
			rpc.Handle("get_overview", api.overview, query),
			rpc.Handle("get_streams", api.streams, query),
		}},
		{Name: OutboxResource, Ops: []rpc.Op{
			rpc.Handle("find_page", api.findPage, query),
			rpc.Handle("get", api.get, query),
			rpc.Handle("replay", api.replay, manage, rpc.Audit()),
			rpc.Handle("discard", api.discard, manage, rpc.Audit()),
		}},
	}
}

type eventAPI struct{ bus *event.Bus }

// EventOverview is the data of sys/event get_overview.
type EventOverview struct {
	// DefaultTransport receives the events no route matches.
	DefaultTransport string `json:"defaultTransport"`
	// Transports are the four transports, enabled or not.
	Transports []EventTransportView `json:"transports"`
	// Routes are the routing rules in match order (the modules' transactional routes included).
	Routes []EventRouteView `json:"routes"`
	// Outbox is the outbox's state.
	Outbox OutboxOverview `json:"outbox"`
}

// EventTransportView is one transport.
type EventTransportView struct {
	Name          string             `json:"name"`
	Enabled       bool               `json:"enabled"`
	Transactional bool               `json:"transactional"`
	AtLeastOnce   bool               `json:"atLeastOnce"`
	PublishOnly   bool               `json:"publishOnly"`
	Settings      []EventSettingView `json:"settings"`
}

// EventSettingView is one svc.event.transports.<name> key and its effective value.
type EventSettingView struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// EventRouteView is one routing rule.
type EventRouteView struct {
	Pattern    string   `json:"pattern"`
	Transports []string `json:"transports"`
}

// OutboxOverview is the outbox's configuration and its rows per status.
type OutboxOverview struct {
	Enabled    bool   `json:"enabled"`
	Sink       string `json:"sink"`
	MaxRetries int    `json:"maxRetries"`
	// Counts has every status (pending, processing, completed, failed, dead), 0 when none.
	Counts map[string]int64 `json:"counts"`
}

func (a eventAPI) overview(ctx context.Context, _ rpc.Call, _ rpc.NoParams) (*EventOverview, error) {
	cfg := a.bus.Config()
	out := &EventOverview{DefaultTransport: cfg.DefaultTransport, Routes: []EventRouteView{},
		Outbox: OutboxOverview{Sink: cfg.Transports.Outbox.Sink, MaxRetries: cfg.Transports.Outbox.MaxRetries,
			Counts: map[string]int64{}}}
	for _, t := range a.bus.Transports() {
		v := EventTransportView{Name: t.Name, Enabled: t.Enabled, Transactional: t.Capabilities.Transactional,
			AtLeastOnce: t.Capabilities.AtLeastOnce, PublishOnly: t.Capabilities.PublishOnly,
			Settings: make([]EventSettingView, len(t.Settings))}
		for i, s := range t.Settings {
			v.Settings[i] = EventSettingView{Key: s.Key, Value: s.Value}
		}
		out.Transports = append(out.Transports, v)
	}
	for _, r := range a.bus.Routes() {
		out.Routes = append(out.Routes, EventRouteView{Pattern: r.Pattern, Transports: r.Transports})
	}
	counts, ok, err := a.bus.OutboxCounts(ctx)
	if err != nil {
		return nil, err
	}
	out.Outbox.Enabled = ok
	if ok {
		for _, s := range outboxStatuses {
			out.Outbox.Counts[s] = counts[s]
		}
	}
	return out, nil
}

// outboxStatuses are the statuses of sys_event_outbox rows.
var outboxStatuses = []string{event.OutboxPending, event.OutboxProcessing, event.OutboxCompleted, event.OutboxFailed, event.OutboxDead}

func (a eventAPI) streams(ctx context.Context, _ rpc.Call, _ rpc.NoParams) (*event.StreamReport, error) {
	r, err := a.bus.InspectStreams(ctx)
	return &r, err
}

// OutboxSearch filters sys/event/outbox find_page: Status one status (empty: all), EventType a
// prefix of the event type, EventID an exact event id. Newest row first; meta.page and
// meta.size page it (wire-core §9).
type OutboxSearch struct {
	Status    string `json:"status,omitempty"`
	EventType string `json:"eventType,omitempty"`
	EventID   string `json:"eventId,omitempty"`
}

// Validate implements rpc.Validator.
func (s *OutboxSearch) Validate() error {
	var c rpc.Check
	c.Valid("status", s.Status == "" || slices.Contains(outboxStatuses, s.Status))
	c.MaxLen("eventType", s.EventType, 128)
	c.MaxLen("eventId", s.EventID, 64)
	return c.Err()
}

// OutboxRowView is one sys_event_outbox row. Times are RFC 3339 UTC; Headers and Payload are
// answered by get only.
type OutboxRowView struct {
	ID            string            `json:"id"`
	EventID       string            `json:"eventId"`
	EventType     string            `json:"eventType"`
	Source        string            `json:"source"`
	Status        string            `json:"status"`
	RetryCount    int               `json:"retryCount"`
	LastError     string            `json:"lastError,omitempty"`
	CreatedAt     time.Time         `json:"createdAt"`
	OccurredAt    time.Time         `json:"occurredAt"`
	ProcessedAt   *time.Time        `json:"processedAt,omitempty"`
	RetryAfter    *time.Time        `json:"retryAfter,omitempty"`
	TraceID       string            `json:"traceId,omitempty"`
	CorrelationID string            `json:"correlationId,omitempty"`
	Headers       map[string]string `json:"headers,omitempty"`
	Payload       json.RawMessage   `json:"payload,omitempty"`
}

// outboxView maps r; detail adds headers and payload.
func outboxView(r event.OutboxRow, detail bool) OutboxRowView {
	v := OutboxRowView{ID: r.ID, EventID: r.EventID, EventType: r.EventType, Source: r.Source, Status: r.Status,
		RetryCount: r.RetryCount, LastError: r.LastError, CreatedAt: r.CreatedAt.UTC(), OccurredAt: r.OccurredAt.UTC(),
		ProcessedAt: optTime(r.ProcessedAt), RetryAfter: optTime(r.RetryAfter), TraceID: r.TraceID,
		CorrelationID: r.CorrelationID}
	if detail {
		v.Payload = json.RawMessage(r.Payload)
		if r.Headers != "" {
			_ = json.Unmarshal([]byte(r.Headers), &v.Headers) // written by the outbox: an object
		}
	}
	return v
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func (a eventAPI) findPage(ctx context.Context, c rpc.Call, s OutboxSearch) (*crud.Page[OutboxRowView], error) {
	meta := crud.ReadMeta(c.Meta)
	rows, total, err := a.bus.FindOutbox(ctx, event.OutboxQuery{Status: s.Status, EventType: s.EventType,
		EventID: s.EventID, Offset: (meta.Page - 1) * meta.Size, Limit: meta.Size})
	if err != nil {
		return nil, err
	}
	page := &crud.Page[OutboxRowView]{Page: meta.Page, Size: meta.Size, Total: total, Items: make([]OutboxRowView, len(rows))}
	for i, r := range rows {
		page.Items[i] = outboxView(r, false)
	}
	return page, nil
}

// OutboxRowParams address one outbox row by its id.
type OutboxRowParams struct {
	ID string `json:"id"`
}

// Validate implements rpc.Validator.
func (p *OutboxRowParams) Validate() error {
	var c rpc.Check
	c.Required("id", p.ID != "")
	c.MaxLen("id", p.ID, 36)
	return c.Err()
}

func (a eventAPI) get(ctx context.Context, _ rpc.Call, p OutboxRowParams) (*OutboxRowView, error) {
	r, err := a.bus.OutboxRowByID(ctx, p.ID)
	if err != nil {
		return nil, outboxError(err)
	}
	v := outboxView(r, true)
	return &v, nil
}

// ReplayView is the answer of sys/event/outbox replay: what happened (outcome delivered,
// failed or not_dead) and the row afterwards.
type ReplayView struct {
	Outcome string        `json:"outcome"`
	Row     OutboxRowView `json:"row"`
}

func (a eventAPI) replay(ctx context.Context, _ rpc.Call, p OutboxRowParams) (*ReplayView, error) {
	r, err := a.bus.ReplayDeadLetter(ctx, p.ID)
	if err != nil {
		return nil, outboxError(err)
	}
	return &ReplayView{Outcome: r.Outcome, Row: outboxView(r.Row, false)}, nil
}

// DiscardView is the answer of sys/event/outbox discard.
type DiscardView struct {
	// Discarded is false when the row was not dead (nothing was deleted).
	Discarded bool `json:"discarded"`
}

func (a eventAPI) discard(ctx context.Context, _ rpc.Call, p OutboxRowParams) (*DiscardView, error) {
	if _, err := a.bus.OutboxRowByID(ctx, p.ID); err != nil {
		return nil, outboxError(err)
	}
	ok, err := a.bus.DiscardDeadLetter(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	return &DiscardView{Discarded: ok}, nil
}

// outboxError answers an unknown row (or a disabled outbox) with record_not_found (2001).
func outboxError(err error) error {
	if errors.Is(err, event.ErrOutboxRowNotFound) {
		return rpc.ErrRecordNotFound
	}
	return err
}

package integration

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
)

// writeTimeout bounds one log insert; the insert does not inherit the caller's cancellation.
const writeTimeout = 10 * time.Second

// HTTPExchange is one wire call of an invocation as the log stores it (§4).
type HTTPExchange struct {
	Method          string            `json:"method"`
	URL             string            `json:"url"`
	RequestHeaders  map[string]string `json:"requestHeaders,omitempty"`
	RequestBody     string            `json:"requestBody,omitempty"`
	Status          int               `json:"status,omitempty"`
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty"`
	ResponseBody    string            `json:"responseBody,omitempty"`
	DurationMs      int64             `json:"durationMs"`
	Error           string            `json:"error,omitempty"`
}

// Invocation is what the invoker and the inbound gateway hand the recorder after a run.
type Invocation struct {
	SystemCode   string
	ContractCode string
	Direction    string
	// FailureKind is "" on success, else one of the failure kinds of §1.
	FailureKind string
	Duration    time.Duration
	Input       json.RawMessage
	Output      json.RawMessage
	Trace       []HTTPExchange
	Err         error
	// Secrets are the decrypted credential values of the system, scrubbed from every capture.
	Secrets []string
}

// Recorder writes invocations to itg_invocation_log by svc.integration.log (§10).
type Recorder struct {
	db    *db.DB
	cfg   config.InvocationLog
	clock func() time.Time
	log   *slog.Logger
}

// NewRecorder returns the recorder of cfg on d.
func NewRecorder(d *db.DB, cfg config.InvocationLog, clock func() time.Time, log *slog.Logger) *Recorder {
	return &Recorder{db: d, cfg: cfg, clock: clock, log: log}
}

// Wants reports whether the mode records an invocation with this failure kind: off never,
// errors only failures, all everything.
func (r *Recorder) Wants(failureKind string) bool {
	switch r.cfg.Mode {
	case config.InvocationLogOff:
		return false
	case config.InvocationLogAll:
		return true
	}
	return failureKind != ""
}

// Row builds the masked, truncated row of inv; request_id comes from ctx's request.
func (r *Recorder) Row(ctx context.Context, inv Invocation) *InvocationLog {
	m := newMasker(r.cfg.MaskFields, int(r.cfg.CaptureLimit), r.credentials(inv))
	row := &InvocationLog{ID: rpc.NewID(), CreatedAt: crud.NewTime(r.clock()), CreatedBy: "system",
		SystemCode: inv.SystemCode, ContractCode: inv.ContractCode, Direction: inv.Direction, FailureKind: inv.FailureKind,
		DurationMs: inv.Duration.Milliseconds(), Input: m.capture(inv.Input), Output: m.capture(inv.Output),
		RequestID: rpc.RequestInfoFrom(ctx).ID}
	if row.Direction == "" {
		row.Direction = DirectionOutbound
	}
	if inv.Err != nil {
		msg := m.scrub(inv.Err.Error())
		row.Error = &msg
	}
	if len(inv.Trace) > 0 {
		row.HTTPTrace, _ = json.Marshal(m.trace(inv.Trace)) // plain structs of strings encode
	}
	return row
}

// MaskTrace masks a wire trace as the log stores it (dry runs answer it so): names, credential
// headers, the given secrets and the trace's credential header values scrubbed, bodies cut.
func (r *Recorder) MaskTrace(trace []HTTPExchange, secrets []string) []HTTPExchange {
	inv := Invocation{Trace: trace, Secrets: secrets}
	return newMasker(r.cfg.MaskFields, int(r.cfg.CaptureLimit), r.credentials(inv)).trace(trace)
}

// credentials are the literal values to scrub: the system's secrets and the values of every
// credential header the trace carries.
func (r *Recorder) credentials(inv Invocation) []string {
	out := append([]string(nil), inv.Secrets...)
	for _, x := range inv.Trace {
		for _, h := range []map[string]string{x.RequestHeaders, x.ResponseHeaders} {
			for k, v := range h {
				if isCredentialHeader(k) {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// Record writes inv when the mode wants it. The insert survives the caller's cancellation (a
// timed-out call still gets its row); a failed insert is only logged.
func (r *Recorder) Record(ctx context.Context, inv Invocation) {
	if !r.Wants(inv.FailureKind) {
		return
	}
	row := r.Row(ctx, inv)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if _, err := r.db.NewInsert().Model(row).Exec(wctx); err != nil {
		r.log.ErrorContext(wctx, "integration: invocation log insert failed", slog.String("system", inv.SystemCode),
			slog.String("contract", inv.ContractCode), slog.Any("error", err))
	}
}

// Prune deletes rows older than log.retention; idempotent and lock-free, so every node may
// run it.
func (r *Recorder) Prune(ctx context.Context) error {
	if r.cfg.Retention <= 0 {
		return nil
	}
	_, err := r.db.NewDelete().Model((*InvocationLog)(nil)).
		Where("created_at < ?", crud.NewTime(r.clock().Add(-r.cfg.Retention))).Exec(ctx)
	return err
}

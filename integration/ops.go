package integration

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// DryRunParams are dry_run's params (wire-integration §5.8).
type DryRunParams struct {
	SystemCode   string          `json:"systemCode"`
	ContractCode string          `json:"contractCode"`
	Script       string          `json:"script"`
	Input        json.RawMessage `json:"input"`
}

// Validate: systemCode and contractCode are required.
func (p *DryRunParams) Validate() error {
	return required("systemCode", p.SystemCode, "contractCode", p.ContractCode)
}

// DryRunResult is dry_run's answer: the output (null on failure), the masked wire trace
// (filled on failure too), the failure kind and error.
type DryRunResult struct {
	Output      json.RawMessage `json:"output"`
	Trace       []HTTPExchange  `json:"trace"`
	FailureKind string          `json:"failureKind,omitempty"`
	Error       string          `json:"error,omitempty"`
}

// InboundRequestInput is the sample delivery of dry_run_inbound.
type InboundRequestInput struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Query   map[string]string `json:"query"`
	Body    string            `json:"body"`
}

// DryRunInboundParams are dry_run_inbound's params.
type DryRunInboundParams struct {
	SystemCode    string              `json:"systemCode"`
	ContractCode  string              `json:"contractCode"`
	Script        string              `json:"script"`
	Request       InboundRequestInput `json:"request"`
	HandlerOutput json.RawMessage     `json:"handlerOutput"`
}

// Validate: systemCode and contractCode are required.
func (p *DryRunInboundParams) Validate() error {
	return required("systemCode", p.SystemCode, "contractCode", p.ContractCode)
}

// InboundDryRunResult is dry_run_inbound's answer.
type InboundDryRunResult struct {
	Reply           json.RawMessage `json:"reply"`
	DispatchedInput json.RawMessage `json:"dispatchedInput"`
	FailureKind     string          `json:"failureKind,omitempty"`
	Error           string          `json:"error,omitempty"`
}

// TestConnectionParams are test_connection's params.
type TestConnectionParams struct {
	SystemCode string `json:"systemCode"`
	Method     string `json:"method"`
	Path       string `json:"path"`
}

// Validate: systemCode is required.
func (p *TestConnectionParams) Validate() error { return required("systemCode", p.SystemCode) }

// HTTPProbe is the HTTP half of a connection check.
type HTTPProbe struct {
	Reachable  bool   `json:"reachable"`
	Status     int    `json:"status,omitempty"`
	StatusText string `json:"statusText,omitempty"`
	DurationMs int64  `json:"durationMs"`
	Error      string `json:"error,omitempty"`
}

// DatabaseProbe is the database half of a connection check.
type DatabaseProbe struct {
	Reachable  bool   `json:"reachable"`
	Version    string `json:"version,omitempty"`
	DurationMs int64  `json:"durationMs"`
	Error      string `json:"error,omitempty"`
}

// ConnectionCheck is test_connection's answer: one probe per configured transport.
type ConnectionCheck struct {
	HTTP     *HTTPProbe     `json:"http,omitempty"`
	Database *DatabaseProbe `json:"database,omitempty"`
}

// RouteFinding is one finding of diagnose_routes.
type RouteFinding struct {
	Kind         string `json:"kind"`
	RouteID      string `json:"routeId,omitempty"`
	RouteKey     string `json:"routeKey"`
	ContractCode string `json:"contractCode,omitempty"`
	ContractName string `json:"contractName,omitempty"`
	SystemCode   string `json:"systemCode,omitempty"`
	SystemName   string `json:"systemName,omitempty"`
}

// RouteDiagnostics is diagnose_routes' answer.
type RouteDiagnostics struct {
	Findings []RouteFinding `json:"findings"`
}

// opsResource is integration/ops (wire-integration §5.8): the dry-run consoles, the connection
// probe and the routing diagnosis, each under integration.ops.<action>. Dry runs record
// nothing: no statistics, no log, no cache.
func (s *Service) opsResource() rpc.Resource {
	return rpc.Resource{Name: "integration/ops", Ops: []rpc.Op{
		rpc.Handle("dry_run", s.dryRun, rpc.RequiredPermission("integration.ops.dry_run")),
		rpc.Handle("dry_run_inbound", s.dryRunInbound, rpc.RequiredPermission("integration.ops.dry_run_inbound")),
		rpc.Handle("test_connection", s.testConnection, rpc.RequiredPermission("integration.ops.test_connection")),
		rpc.Handle("diagnose_routes", s.diagnoseRoutes, rpc.RequiredPermission("integration.ops.diagnose_routes")),
		rpc.Handle("key_status", s.keyStatus, rpc.RequiredPermission("integration.ops.key_status")),
	}}
}

// dryRun runs an outbound script (the given one, else the saved outbound adapter) with real
// wire calls and the run_timeout; disabled definitions are allowed.
func (s *Service) dryRun(ctx context.Context, _ rpc.Call, p DryRunParams) (*DryRunResult, error) {
	c, sys, script, err := s.dryRunTarget(ctx, p.SystemCode, p.ContractCode, p.Script, DirectionOutbound)
	if err != nil {
		return nil, err
	}
	in, err := canonical(p.Input)
	if err != nil {
		return nil, detail(ErrInputInvalid, err.Error())
	}
	o := s.runOutbound(ctx, c, sys, script, in, s.cfg.RunTimeout)
	res := &DryRunResult{Output: o.output, Trace: s.recorder.MaskTrace(o.trace, o.secrets), FailureKind: o.kind}
	if o.err != nil {
		res.Output, res.Error = json.RawMessage("null"), s.message(o.err)
	}
	if res.Trace == nil {
		res.Trace = []HTTPExchange{}
	}
	return res, nil
}

// dryRunInbound runs an inbound script on a sample delivery: verification skipped, the
// business handler replaced by a stub answering handlerOutput, schemas enforced on both sides
// of dispatch.
func (s *Service) dryRunInbound(ctx context.Context, call rpc.Call, p DryRunInboundParams) (*InboundDryRunResult, error) {
	c, sys, script, err := s.dryRunTarget(ctx, p.SystemCode, p.ContractCode, p.Script, DirectionInbound)
	if err != nil {
		return nil, err
	}
	stub, err := canonical(p.HandlerOutput)
	if err != nil {
		return nil, detail(ErrOutputInvalid, err.Error())
	}
	req := &InboundRequest{SystemCode: sys.Code, ContractCode: c.Code, Protocol: "http", Method: strings.ToUpper(p.Request.Method),
		Path: p.Request.Path, Headers: map[string]string{}, Query: p.Request.Query, Body: []byte(p.Request.Body),
		ClientAddr: rpc.RequestInfoFrom(ctx).ClientIP}
	if req.Method == "" {
		req.Method = http.MethodPost
	}
	if req.Path == "" {
		req.Path = "/integration/inbound/" + sys.Code + "/" + c.Code
	}
	if req.Query == nil {
		req.Query = map[string]string{}
	}
	for k, v := range p.Request.Headers {
		req.Headers[strings.ToLower(k)] = v
	}
	o := s.runInbound(ctx, c, sys, script, req, s.cfg.RunTimeout, func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return stub, nil
	})
	res := &InboundDryRunResult{Reply: o.reply, DispatchedInput: oneOrMany(o.inputs), FailureKind: o.kind}
	if o.err != nil {
		res.Error = s.message(o.err)
	}
	if o.scriptFailed || len(res.Reply) == 0 {
		res.Reply = json.RawMessage("null")
	}
	if res.DispatchedInput == nil {
		res.DispatchedInput = json.RawMessage("null")
	}
	return res, nil
}

// dryRunTarget loads a dry run's definitions (disabled ones too) and its script: the given
// one, else the saved adapter of the direction (2604 when there is none).
func (s *Service) dryRunTarget(ctx context.Context, system, contract, script, dir string) (*Contract, *System, string, error) {
	sys, err := s.loadSystem(ctx, system, true)
	if err != nil {
		return nil, nil, "", err
	}
	c, err := s.loadContract(ctx, contract, true)
	if err != nil {
		return nil, nil, "", err
	}
	if strings.TrimSpace(script) == "" {
		ad, err := s.loadAdapter(ctx, sys.ID, c.ID, dir, true)
		if err != nil {
			return nil, nil, "", err
		}
		script = ad.Script
	}
	return c, sys, script, nil
}

// message is an error as the dry-run consoles show it: the API error's text in the server's
// language, or the plain error.
func (s *Service) message(err error) string {
	re, ok := rpc.AsError(err)
	switch {
	case !ok:
		return err.Error()
	case re.Message != "":
		return re.Message
	case s.msgs != nil:
		return s.msgs.T(re.Key, re.Args)
	}
	return re.Error()
}

// describe is err as statistics and the log keep it: the message (nil stays nil).
func (s *Service) describe(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(s.message(err))
}

// testConnection probes the system's transports: HTTP (method and path on the base URL, with
// its authentication) and the data source (a throwaway connection). Unreachable is data; a
// configuration fault (unknown scheme, undecryptable secret) is an error.
func (s *Service) testConnection(ctx context.Context, _ rpc.Call, p TestConnectionParams) (*ConnectionCheck, error) {
	sys, err := s.loadSystem(ctx, p.SystemCode, true)
	if err != nil {
		return nil, err
	}
	out := &ConnectionCheck{}
	if sys.BaseURL != "" {
		if out.HTTP, err = s.probeHTTP(ctx, sys, p.Method, p.Path); err != nil {
			return nil, err
		}
	}
	if sys.DataSource != nil {
		if out.Database, err = s.probeDatabase(ctx, sys); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Service) probeHTTP(ctx context.Context, sys *System, method, path string) (*HTTPProbe, error) {
	auth, err := s.outboundAuthOf(sys.OutboundAuth)
	if err != nil {
		return nil, unwrapKind(err)
	}
	if method == "" {
		method = http.MethodGet
	}
	if path == "" {
		path = "/"
	}
	base, err := url.Parse(sys.BaseURL)
	if err != nil {
		return nil, ErrInvalidBaseURL
	}
	timeout := defaultCallTimeout
	if sys.TimeoutMs > 0 {
		timeout = time.Duration(sys.TimeoutMs) * time.Millisecond
	}
	h := &httpLib{base: base}
	u, err := h.target(path, nil)
	if err != nil {
		return nil, rpc.ErrBadRequest.WithMessage(err.Error())
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	probe := &HTTPProbe{}
	start := s.clock()
	req, err := http.NewRequestWithContext(pctx, strings.ToUpper(method), u.String(), http.NoBody)
	if err == nil && auth != nil {
		r := s.engine.newRun(pctx)
		r.mask = s.consoleMask(sys)
		err = auth(r, req, nil)
		r.close()
		if err != nil {
			return nil, detail(ErrInvalidAuthParams, err.Error())
		}
	}
	var res *http.Response
	if err == nil {
		res, err = s.httpClient.Do(req)
	}
	probe.DurationMs = s.clock().Sub(start).Milliseconds()
	if err != nil {
		probe.Error = err.Error()
		return probe, nil
	}
	res.Body.Close()
	probe.Reachable, probe.Status, probe.StatusText = true, res.StatusCode, http.StatusText(res.StatusCode)
	return probe, nil
}

// unwrapKind is the API error a kindError carries.
func unwrapKind(err error) error {
	if ke, ok := err.(*kindError); ok {
		return ke.err
	}
	return err
}

// diagnoseRoutes reports routing problems (wire-integration §5.8): dangling_adapter,
// wildcard_gap, disabled_system, disabled_contract and uncovered_contract.
func (s *Service) diagnoseRoutes(ctx context.Context, _ rpc.Call, _ rpc.NoParams) (*RouteDiagnostics, error) {
	var (
		routes    []Route
		contracts []Contract
		systems   []System
		adapters  []Adapter
	)
	for _, q := range []func() error{
		func() error {
			return s.db.NewSelect().Model(&routes).Where("is_enabled = ?", true).OrderExpr("route_key, contract_id, id").Scan(ctx)
		},
		func() error { return s.db.NewSelect().Model(&contracts).OrderExpr("code").Scan(ctx) },
		func() error { return s.db.NewSelect().Model(&systems).Scan(ctx) },
		func() error {
			return s.db.NewSelect().Model(&adapters).Where("direction = ? AND is_enabled = ?", DirectionOutbound, true).Scan(ctx)
		},
	} {
		if err := q(); err != nil {
			return nil, err
		}
	}
	contractByID := map[string]*Contract{}
	for i := range contracts {
		contractByID[contracts[i].ID] = &contracts[i]
	}
	systemByID := map[string]*System{}
	for i := range systems {
		systemByID[systems[i].ID] = &systems[i]
	}
	serves := map[[2]string]bool{} // (system, contract) with an enabled outbound adapter
	for _, a := range adapters {
		serves[[2]string{a.SystemID, a.ContractID}] = true
	}
	exact := map[[2]string]bool{} // (key, contract)
	wildcard := map[string]*Route{}
	keys := []string{}
	for i, r := range routes {
		if r.ContractID == "" {
			wildcard[r.RouteKey] = &routes[i]
		} else {
			exact[[2]string{r.RouteKey, r.ContractID}] = true
		}
		if len(keys) == 0 || keys[len(keys)-1] != r.RouteKey {
			keys = append(keys, r.RouteKey)
		}
	}
	var out []RouteFinding
	finding := func(kind string, r *Route, c *Contract, sys *System, key string) {
		f := RouteFinding{Kind: kind, RouteKey: key}
		if r != nil {
			f.RouteID = r.ID
		}
		if c != nil {
			f.ContractCode, f.ContractName = c.Code, c.Name
		}
		if sys != nil {
			f.SystemCode, f.SystemName = sys.Code, sys.Name
		}
		out = append(out, f)
	}
	for i := range routes {
		r := &routes[i]
		sys, c := systemByID[r.SystemID], contractByID[r.ContractID]
		if sys != nil && !sys.IsEnabled {
			finding("disabled_system", r, c, sys, r.RouteKey)
		}
		if c != nil && !c.IsEnabled {
			finding("disabled_contract", r, c, sys, r.RouteKey)
		}
		if c != nil && sys != nil && !serves[[2]string{sys.ID, c.ID}] {
			finding("dangling_adapter", r, c, sys, r.RouteKey)
		}
	}
	for _, key := range keys {
		w := wildcard[key]
		for i := range contracts {
			c := &contracts[i]
			if !c.IsEnabled || exact[[2]string{key, c.ID}] {
				continue
			}
			switch {
			case w == nil:
				finding("uncovered_contract", nil, c, nil, key)
			case !serves[[2]string{w.SystemID, c.ID}]:
				finding("wildcard_gap", w, c, systemByID[w.SystemID], key)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	if out == nil {
		out = []RouteFinding{}
	}
	return &RouteDiagnostics{Findings: out}, nil
}

package cron

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	bus "github.com/svc-framework/svc/event"
)

// Names of the built-in jobs (Options.Builtins).
const (
	// JobHTTPRequest calls a URL (HTTPRequestParams); 2xx succeeds.
	JobHTTPRequest = "http.request"
	// JobEventPublish publishes an event on the bus (EventPublishParams).
	JobEventPublish = "event.publish"
)

// Bounds of http.request.
const (
	httpDefaultTimeout = 30 * time.Second
	httpMaxRedirects   = 10
	// httpExcerptBytes bounds the response body quoted in a failed run's error.
	httpExcerptBytes = 512
	// httpDrainBytes bounds what is read of a response to reuse its connection.
	httpDrainBytes = 64 << 10
)

// Milliseconds is a duration in JSON: a number of milliseconds or a Go duration string ("30s").
type Milliseconds time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (m *Milliseconds) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("timeout %q: %w", s, err)
		}
		*m = Milliseconds(d)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("timeout: a number of milliseconds or a duration string: %w", err)
	}
	*m = Milliseconds(time.Duration(n) * time.Millisecond)
	return nil
}

// HTTPRequestParams are the params of the http.request job.
type HTTPRequestParams struct {
	// Method defaults to GET.
	Method string `json:"method"`
	// URL is an http or https URL whose host the allow-list accepts.
	URL string `json:"url"`
	// Headers are sent as given (never journaled).
	Headers map[string]string `json:"headers"`
	// Body is sent verbatim.
	Body string `json:"body"`
	// Timeout bounds the request (default 30 s); the run's own timeout applies too.
	Timeout Milliseconds `json:"timeout"`
}

// HTTPRequestJob returns the http.request job: it sends the request its params describe through
// a client that refuses destinations policy does not allow — checked on the URL, on every
// redirect and on the resolved address at dial time — and without any proxy. A 2xx response
// succeeds; anything else fails with the status and a bounded excerpt of the body.
//
// It implements ParamsChecker with the same URL check (scheme http or https, a host, the
// allow-list and the internal ranges for an IP literal), so a schedule whose URL can only be
// refused is refused when it is saved (2706), not at each run. A host name's resolved address
// can only be judged when the job dials.
func HTTPRequestJob(policy *HostPolicy) JobHandler {
	client := newPolicyClient(policy)
	run := TypedJob(JobHTTPRequest, func(ctx context.Context, e Execution, p HTTPRequestParams) error {
		req, err := p.request(ctx, policy)
		if err != nil {
			return err
		}
		setRunHeaders(req.Header, e)
		timeout := time.Duration(p.Timeout)
		if timeout <= 0 {
			timeout = httpDefaultTimeout
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		resp, err := client.Do(req.WithContext(ctx))
		if err != nil {
			return fmt.Errorf("http.request %s %s: %w", req.Method, safeURL(req.URL), unwrapURLError(err))
		}
		defer resp.Body.Close()
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, httpExcerptBytes))
		_, _ = io.CopyN(io.Discard, resp.Body, httpDrainBytes)
		if resp.StatusCode/100 == 2 {
			return nil
		}
		return fmt.Errorf("http.request %s %s: status %s: %s", req.Method, safeURL(req.URL), resp.Status, bodyExcerpt(excerpt))
	})
	return checkedJob{JobHandler: run, doc: httpRequestDoc, check: func(params json.RawMessage) error {
		var p HTTPRequestParams
		if err := (Execution{JobName: JobHTTPRequest, Params: params}).BindParams(&p); err != nil {
			return err
		}
		_, err := p.url(policy)
		return err
	}}
}

// Headers the http.request job adds to every request, after the params' own (which cannot
// override them): the receiver's idempotency key. A run re-executed after a takeover (see
// cron.md, "at least once") carries the same schedule and logical time under a new run id, so a
// receiver that must act once per occurrence dedupes on HeaderSchedule + HeaderScheduledAt.
const (
	HeaderRunID       = "X-Svc-Cron-Run-Id"
	HeaderSchedule    = "X-Svc-Cron-Schedule"
	HeaderScheduledAt = "X-Svc-Cron-Scheduled-At"
)

// setRunHeaders stamps the run's identity on an outgoing request; the logical time is epoch
// milliseconds.
func setRunHeaders(h http.Header, e Execution) {
	h.Set(HeaderRunID, e.RunID)
	h.Set(HeaderSchedule, e.ScheduleName)
	h.Set(HeaderScheduledAt, strconv.FormatInt(e.ScheduledAt.UnixMilli(), 10))
}

// url parses the params' URL and checks it against policy: the check of every run, and of
// every save through CheckParams.
func (p HTTPRequestParams) url(policy *HostPolicy) (*url.URL, error) {
	u, err := url.Parse(p.URL)
	if err != nil {
		return nil, fmt.Errorf("http.request: url: %w", err)
	}
	if err := checkURL(u, policy); err != nil {
		return nil, err
	}
	return u, nil
}

// request builds the request and checks its URL.
func (p HTTPRequestParams) request(ctx context.Context, policy *HostPolicy) (*http.Request, error) {
	method := strings.ToUpper(strings.TrimSpace(p.Method))
	if method == "" {
		method = http.MethodGet
	}
	u, err := p.url(policy)
	if err != nil {
		return nil, err
	}
	var body io.Reader
	if p.Body != "" {
		body = strings.NewReader(p.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("http.request: %w", err)
	}
	for k, v := range p.Headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// checkURL accepts http and https URLs whose host the policy allows.
func checkURL(u *url.URL, policy *HostPolicy) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: scheme %q (http or https only)", ErrHostNotAllowed, u.Scheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%w: the url has no host", ErrHostNotAllowed)
	}
	return policy.CheckHost(u.Hostname())
}

// newPolicyClient is an HTTP client that dials only addresses policy allows: the dialer's
// Control sees the resolved IP of every connection attempt, so a name resolving (or
// re-resolving) to an internal address is refused; redirects are re-checked and bounded.
func newPolicyClient(policy *HostPolicy) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // a proxy would dial for us, past the address check
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", ErrHostNotAllowed, address)
			}
			return policy.CheckAddr(host, ap.Addr())
		}}
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: t, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= httpMaxRedirects {
			return fmt.Errorf("stopped after %d redirects", httpMaxRedirects)
		}
		return checkURL(req.URL, policy)
	}}
}

// safeURL is the URL as journaled: scheme, host and path, no credentials or query (they may
// carry secrets).
func safeURL(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// unwrapURLError drops the *url.Error wrapper, whose text repeats the full URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// bodyExcerpt quotes up to httpExcerptBytes of a response body as valid UTF-8.
func bodyExcerpt(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(b) == httpExcerptBytes {
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return strconv.Quote(s)
}

// EventPublishParams are the params of the event.publish job.
type EventPublishParams struct {
	// Type is the event type; required.
	Type string `json:"type"`
	// Payload is published verbatim (JSON null when absent).
	Payload json.RawMessage `json:"payload"`
}

// EventPublishJob returns the event.publish job: it publishes {type, payload} from its params
// on pub. Types of the framework (the reserved prefix "svc.", in any letter case:
// event.Reserved) are refused, so a schedule cannot forge them; the check also runs when the
// schedule is saved (ParamsChecker, 2706).
func EventPublishJob(pub bus.Publisher) JobHandler {
	run := TypedJob(JobEventPublish, func(ctx context.Context, _ Execution, p EventPublishParams) error {
		if err := p.check(); err != nil {
			return err
		}
		if pub == nil {
			return errors.New("event.publish: the server has no event bus")
		}
		payload := p.Payload
		if len(payload) == 0 {
			payload = json.RawMessage("null")
		}
		return pub.Publish(ctx, bus.Named{Type: strings.TrimSpace(p.Type), Payload: payload})
	})
	return checkedJob{JobHandler: run, doc: eventPublishDoc, check: func(params json.RawMessage) error {
		var p EventPublishParams
		if err := (Execution{JobName: JobEventPublish, Params: params}).BindParams(&p); err != nil {
			return err
		}
		return p.check()
	}}
}

// check refuses a missing type and the framework's reserved types.
func (p EventPublishParams) check() error {
	t := strings.TrimSpace(p.Type)
	switch {
	case t == "":
		return errors.New("event.publish: params.type is required")
	case bus.Reserved(t):
		return fmt.Errorf("event.publish: type %q: the %s prefix is reserved for the framework", t, bus.ReservedPrefix)
	}
	return nil
}

// checkedJob is a built-in job with its params check (ParamsChecker) and description
// (ParamsDescriber).
type checkedJob struct {
	JobHandler
	doc   ParamsDoc
	check func(params json.RawMessage) error
}

// CheckParams implements ParamsChecker.
func (j checkedJob) CheckParams(params json.RawMessage) error { return j.check(params) }

// DescribeParams implements ParamsDescriber.
func (j checkedJob) DescribeParams() ParamsDoc { return j.doc }

var (
	_ ParamsChecker   = checkedJob{}
	_ ParamsDescriber = checkedJob{}
)

// The built-in jobs' params (HTTPRequestParams, EventPublishParams) as JSON Schemas with an
// example each; TestBuiltinParamsDoc checks every example against its job's own params check.
var (
	httpRequestDoc = ParamsDoc{Required: true, Schema: json.RawMessage(`{"type":"object","required":["url"],"additionalProperties":false,"properties":{` +
		`"method":{"type":"string","default":"GET","description":"HTTP method"},` +
		`"url":{"type":"string","format":"uri","description":"http or https URL; the host must be allowed by svc.cron.store.http_allowed_hosts"},` +
		`"headers":{"type":"object","additionalProperties":{"type":"string"},"description":"request headers (never journaled)"},` +
		`"body":{"type":"string","description":"request body, sent verbatim"},` +
		`"timeout":{"type":["string","integer"],"default":"30s","description":"a duration string (\"10s\") or milliseconds"}}}`),
		Example: json.RawMessage(`{"method":"POST","url":"https://hooks.example.com/nightly","headers":{"Content-Type":"application/json"},"body":"{\"job\":\"nightly\"}","timeout":"10s"}`)}
	eventPublishDoc = ParamsDoc{Required: true, Schema: json.RawMessage(`{"type":"object","required":["type"],"additionalProperties":false,"properties":{` +
		`"type":{"type":"string","minLength":1,"description":"event type; the svc. prefix is reserved for the framework"},` +
		`"payload":{"description":"any JSON value, published verbatim (null when absent)"}}}`),
		Example: json.RawMessage(`{"type":"app.report.due","payload":{"report":"daily"}}`)}
)

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Leases of the run, all short so that a pause or a cut of a few seconds outlasts every one of
// them: a paused node's work is taken over while it sleeps.
const (
	cronHeartbeat  = time.Second
	cronAbandoned  = 3 * time.Second
	outboxMinLease = 2 * time.Second
	streamIdle     = 3 * time.Second
	inboxLease     = 3 * time.Second
	longestLease   = 4 * time.Second // the longest of all of them, with margin
)

// cluster is the run's three svc nodes and the services under them.
type cluster struct {
	dir     string
	bin     string
	db      *database
	redis   *proc
	s3      *proc
	s3Port  int
	redisPt int
	nodes   []*node
	secret  string
	// revocation is the [svc.security.revocation] section of the nodes' configuration.
	revocation string
	client     *http.Client
}

// node is one `svc serve` process with its own port and its own links to the database
// (proxy), Redis and S3 (dropping proxies), each of which a fault can cut.
type node struct {
	id     int
	port   int
	admin  int
	proxy  *proxy
	redis  *proxy
	s3     *proxy
	proc   *proc
	config string
	mu     sync.Mutex
	starts int
	// skew is how far the node's clock is off (its log's times are corrected by it).
	skew time.Duration
}

func (n *node) url() string { return fmt.Sprintf("http://127.0.0.1:%d", n.port) }

// config renders the node's configuration file: everything the issue asks to be on.
func (c *cluster) config(n *node) string {
	var ds string
	if c.db.kind == "postgres" {
		ds = fmt.Sprintf("type = \"postgres\"\nhost = \"127.0.0.1\"\nport = %d\nuser = \"postgres\"\ndatabase = \"faults\"\n", n.proxy.port())
	} else {
		ds = fmt.Sprintf("type = \"mysql\"\nhost = \"127.0.0.1\"\nport = %d\nuser = \"root\"\ndatabase = \"faults\"\n", n.proxy.port())
	}
	return fmt.Sprintf(`[svc.app]
name = "faults"
port = %d

[svc.admin]
address = "127.0.0.1:%d"
[svc.metrics]
enabled = true

[svc.security]
secret = %q
login_rate_limit = 1000000000
refresh_rate_limit = 1000000000
refresh_not_before = "1ms"
# The harness's admin token must outlive a long run (the 30-minute default expired it before
# the final checks of the first 30-minute run).
access_token_expires = "24h"
%s[svc.security.roles]
admin = ["*"]
# The users load's role change: a role without security.user.query.
reader = ["monitor.*"]

[svc.api.rate_limit]
max = 1000000000

[svc.data_sources.primary]
%s
[svc.kvstore]
enabled = true
host = "127.0.0.1"
port = %d

[svc.storage]
provider = "objstore"
auto_migrate = true
upload_part_rate_limit = 1000000000
claim_ttl = "20s"
sweep_interval = "5s"
delete_worker_interval = "2s"
delete_lease_window = "3s"
[svc.storage.objstore]
endpoint = "127.0.0.1:%d"
access_key = %q
secret_key = %q
bucket = "faults"
region = "us-east-1"

[svc.backup]
destination = "storage"

[svc.cron.store]
enabled = true
auto_migrate = true
poll_interval = "1s"
heartbeat_interval = %q
abandoned_after = %q
misfire_threshold = "10s"
http_allowed_hosts = ["127.0.0.1/32"]

[svc.integration]
auto_migrate = true
[svc.integration.log]
mode = "all"
[svc.integration.inbound.rate_limit]
max = 1000000000
[svc.approval]
auto_migrate = true
[svc.approval.business_binding]
consistency = "eventual"
scan_interval = "1s"

[svc.push]
enabled = true
max_connections_per_user = -1
[[svc.push.bridge]]
event = "svc.storage.file.uploaded"
type = "uploaded"
broadcast = true
[[svc.push.bridge]]
event = "approval.instance.created"
type = "apv.created"
broadcast = true
[[svc.push.bridge]]
event = "approval.instance.completed"
type = "apv.completed"
broadcast = true

[svc.event]
default_transport = "memory"
[svc.event.middleware]
inbox = true
[svc.event.inbox]
processing_lease = %q
[svc.event.transports.kvstore_stream]
enabled = true
claim_idle = %q
claim_interval = "1s"
block_timeout = "1s"
[svc.event.transports.outbox]
enabled = true
sink = "kvstore_stream"
relay_interval = "500ms"
min_lease = %q
[[svc.event.routing]]
pattern = "svc.storage.*"
transports = ["outbox", "kvstore_stream"]
[[svc.event.routing]]
pattern = "approval.*"
transports = ["outbox", "kvstore_stream"]
`, n.port, n.admin, c.secret, c.revocation, ds, n.redis.port(), n.s3.port(), s3Access, s3Secret,
		cronHeartbeat.String(), cronAbandoned.String(), inboxLease.String(), streamIdle.String(), outboxMinLease.String())
}

// newCluster starts the services and three nodes.
// revocation is the [svc.security.revocation] section of every node's configuration ("" for
// none).
// skewEnv is the environment of node skewNode's process (its clock's offset; nil for none).
func newCluster(dir, bin, s3bin, kind string, nodes int, revocation string, skewEnv []string) (*cluster, error) {
	c := &cluster{dir: dir, bin: bin, revocation: revocation, client: &http.Client{Timeout: 10 * time.Second}}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	c.secret = hex.EncodeToString(secret)
	var err error
	if c.db, err = startDatabase(kind, dir); err != nil {
		return c, err
	}
	if c.redis, c.redisPt, err = startRedis(dir); err != nil {
		return c, err
	}
	if c.s3, c.s3Port, err = startS3(s3bin, dir); err != nil {
		return c, err
	}
	for i := range nodes {
		n := &node{id: i}
		if n.port, err = freePort(); err != nil {
			return c, err
		}
		if n.admin, err = freePort(); err != nil {
			return c, err
		}
		if n.proxy, err = newProxy(fmt.Sprintf("127.0.0.1:%d", c.db.port)); err != nil {
			return c, err
		}
		if n.redis, err = newDroppingProxy(fmt.Sprintf("127.0.0.1:%d", c.redisPt)); err != nil {
			return c, err
		}
		if n.s3, err = newDroppingProxy(fmt.Sprintf("127.0.0.1:%d", c.s3Port)); err != nil {
			return c, err
		}
		n.config = filepath.Join(dir, fmt.Sprintf("node%d.toml", i))
		if err := os.WriteFile(n.config, []byte(c.config(n)), 0o600); err != nil {
			return c, err
		}
		n.proc = &proc{name: fmt.Sprintf("node%d", i), log: filepath.Join(dir, fmt.Sprintf("node%d.log", i)),
			args: []string{bin, "--config", n.config, "serve"}, env: []string{"SVC_LOG_LEVEL=warn"}}
		if i == skewNode && len(skewEnv) > 0 {
			n.proc.env = append(n.proc.env, skewEnv...)
			n.skew, _ = time.ParseDuration(strings.TrimPrefix(skewEnv[0], skewVar+"="))
		}
		c.nodes = append(c.nodes, n)
	}
	// The first node applies the migrations alone; the others then start together.
	if err := c.startNode(c.nodes[0]); err != nil {
		return c, err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(c.nodes))
	for _, n := range c.nodes[1:] {
		wg.Go(func() { errs[n.id] = c.startNode(n) })
	}
	wg.Wait()
	return c, errors.Join(errs...)
}

// startNode starts a node's process and waits until /readyz answers 200.
func (c *cluster) startNode(n *node) error {
	n.mu.Lock()
	n.starts++
	n.mu.Unlock()
	if err := n.proc.start(); err != nil {
		return err
	}
	if err := c.waitReady(n, 90*time.Second); err != nil {
		// The node's own words say why (a port taken, a configuration error): name its log and
		// quote its end, instead of the harness's bare "connection refused".
		return fmt.Errorf("%w\n%s ends with:\n%s", err, n.proc.log, logTail(n.proc.log, 20))
	}
	return nil
}

// logTail returns the last n lines of the file at path, or why it cannot be read.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func (c *cluster) waitReady(n *node, timeout time.Duration) error {
	return waitFor(n.proc.name, timeout, func() error { return c.ready(n) })
}

// ready is nil when the node answers /readyz with 200 within two seconds.
func (c *cluster) ready(n *node) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.url()+"/readyz", nil)
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz %d: %s", resp.StatusCode, body)
	}
	return nil
}

// allReady waits until every node is ready and returns how long that took. With a token, ready
// also means serving: an authenticated operation that reads the database (the cron journal's
// first page) succeeds on the node, which /readyz alone does not show.
func (c *cluster) allReady(timeout time.Duration, token string) (time.Duration, error) {
	start := time.Now()
	for _, n := range c.nodes {
		err := waitFor(n.proc.name, timeout-time.Since(start), func() error {
			if err := c.ready(n); err != nil || token == "" {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			_, err := c.call(ctx, n, token, "sys/cron/run", "find_page", map[string]any{"meta": map[string]any{"page": 1, "size": 1}}, nil)
			return err
		})
		if err != nil {
			return time.Since(start), err
		}
	}
	return time.Since(start), nil
}

// addUser creates a built-in user with the CLI against the shared database.
func (c *cluster) addUser(name, password string, roles ...string) error {
	cmd := command([]string{"SVC_LOG_LEVEL=warn"}, c.bin, "--config", c.nodes[0].config, "user", "add", name, "--roles", strings.Join(roles, ","), "--password-stdin")
	cmd.Stdin = strings.NewReader(password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("user add %s: %w\n%s", name, err, out)
	}
	return nil
}

// metric reads one unlabelled sample from a node's /metrics (0 when absent or unreachable).
func (c *cluster) metric(n *node, name string) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", n.admin), nil)
	resp, err := c.client.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}

// stop ends the nodes and the services.
func (c *cluster) stop() {
	for _, n := range c.nodes {
		for _, p := range []*proxy{n.proxy, n.redis, n.s3} {
			if p != nil {
				p.setCut(false)
			}
		}
		if n.proc != nil {
			n.proc.stop(10 * time.Second)
		}
	}
	for _, p := range []*proc{c.s3, c.redis} {
		if p != nil {
			p.stop(5 * time.Second)
		}
	}
	if c.db != nil && c.db.proc != nil {
		c.db.proc.stop(10 * time.Second)
	}
}

// envelope is the /api answer.
type envelope struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// apiError is a non-zero code or a non-2xx status of /api.
type apiError struct {
	status int
	code   int
	msg    string
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d code %d: %s", e.status, e.code, e.msg) }

// call posts one operation to a node's /api and decodes data into out; it returns the HTTP
// status (0 when the request did not get an answer).
func (c *cluster) call(ctx context.Context, n *node, token, resource, action string, params, out any) (int, error) {
	body, _ := json.Marshal(map[string]any{"resource": resource, "action": action, "version": "v1", "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url()+"/api", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return c.do(req, out)
}

func (c *cluster) do(req *http.Request, out any) (int, error) {
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return resp.StatusCode, &apiError{status: resp.StatusCode, code: -1, msg: string(raw[:min(len(raw), 200)])}
	}
	if resp.StatusCode/100 != 2 || env.Code != 0 {
		return resp.StatusCode, &apiError{status: resp.StatusCode, code: env.Code, msg: env.Message}
	}
	if out != nil && len(env.Data) > 0 {
		return resp.StatusCode, json.Unmarshal(env.Data, out)
	}
	return resp.StatusCode, nil
}

// login signs name in on n and returns the access and refresh tokens.
func (c *cluster) login(ctx context.Context, n *node, name, password string) (string, string, int, error) {
	var out struct {
		Tokens struct {
			AccessToken  string `json:"accessToken"`
			RefreshToken string `json:"refreshToken"`
		} `json:"tokens"`
	}
	st, err := c.call(ctx, n, "", "security/auth", "login", map[string]any{"type": "password", "principal": name, "credentials": password}, &out)
	if err == nil && out.Tokens.AccessToken == "" {
		err = errors.New("login answered no token")
	}
	return out.Tokens.AccessToken, out.Tokens.RefreshToken, st, err
}

// logged returns the times at which node i logged a line with msg (its JSON log, every start
// of the process appended).
func (c *cluster) logged(i int, msg string) ([]time.Time, error) {
	lines, err := c.loggedIDs(i, msg)
	out := make([]time.Time, len(lines))
	for k, l := range lines {
		out[k] = l.at
	}
	return out, err
}

// logLine is one line of a node's log: when, and the id attribute it names (if any).
type logLine struct {
	at time.Time
	id string
}

// loggedIDs returns the lines of node i's log with msg, their times on the harness's clock.
func (c *cluster) loggedIDs(i int, msg string) ([]logLine, error) {
	f, err := os.Open(c.nodes[i].proc.log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []logLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var line struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
			ID   string    `json:"id"`
		}
		if !bytes.Contains(sc.Bytes(), []byte(msg)) || json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != msg {
			continue
		}
		out = append(out, logLine{line.Time.Add(-c.nodes[i].skew), line.ID})
	}
	return out, sc.Err()
}

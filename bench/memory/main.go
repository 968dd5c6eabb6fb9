// Command memory measures the memory the shipped binary holds (issue #43): its anonymous
// resident memory (heap, stacks, runtime: what the process itself allocated) and its PSS (the
// resident set with every shared page divided among the processes that map it), both from
// /proc/PID/smaps_rollup, at five points:
//
//  1. idle, after one get_user_info;
//  2. after 5 000 get_user_info calls over 16 connections;
//  3. the peak of a login burst: 64 connections of password logins (argon2id), sampled every
//     10 ms;
//  4. after -families logouts of tokens minted beforehand (each its own token family, revoked
//     and remembered by the revocation set);
//  5. over -mixed of mixed load on 16 connections (each iteration: a password login, 20
//     get_user_info calls with its token, a refresh, 20 calls with the new token, every
//     -upload-every iterations of a connection an upload of 256 KiB in two parts through
//     sys/storage, a logout) while a durable cron schedule fires every second (event.publish),
//     sampled every -every: the figure is the last sample against the first, which must stay
//     within ± 10 %.
//
// RSS with its file-backed pages is printed too, as information: file pages are the binary's
// and SQLite's, held by the page cache and shared between replicas. The bare handler of
// bench/api/bare idle is the reference of the same run.
//
//	go run ./bench/memory -bin .cache/bin/svc -bare .cache/bin/bare -mint .cache/bin/mint
//	    [-families 100000] [-mixed 10m] [-every 30s] [-env GOGC=50 ...]
//
// The last lines are RESULT lines for bench/run.sh.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/svc-framework/svc/bench/internal/procstat"
	"github.com/svc-framework/svc/internal/testservice"
)

const password = "bench-Password-1"

// uploadEvery is -upload-every; uploadSize is the size of each upload of the mixed load.
var uploadEvery = 10

const uploadSize = 256 << 10

func main() {
	bin := flag.String("bin", ".cache/bin/svc", "the svc binary")
	bare := flag.String("bare", ".cache/bin/bare", "the bare handler of bench/api/bare")
	mint := flag.String("mint", ".cache/bin/mint", "bench/logout/mint")
	families := flag.Int("families", 100_000, "revoked families of step 4")
	mixed := flag.Duration("mixed", 10*time.Minute, "length of the mixed load")
	every := flag.Duration("every", 30*time.Second, "sampling interval of the mixed load")
	flag.IntVar(&uploadEvery, "upload-every", 10, "one upload per this many mixed iterations of a connection")
	var extra envList
	flag.Var(&extra, "env", "NAME=VALUE for svc serve's environment, e.g. GOGC=50 (repeatable)")
	flag.Parse()
	if err := run(*bin, *bare, *mint, extra, *families, *mixed, *every); err != nil {
		log.Fatal(err)
	}
}

// envList is the repeatable -env flag.
type envList []string

func (e *envList) String() string     { return strings.Join(*e, " ") }
func (e *envList) Set(v string) error { *e = append(*e, v); return nil }

func run(bin, bare, mint string, extra []string, families int, mixed, every time.Duration) error {
	dir, err := os.MkdirTemp("", "svc-memory-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, f := range [][2]string{{bin, "svc"}, {bare, "bare"}, {mint, "mint"}} {
		if err := copyFile(f[0], filepath.Join(dir, f[1])); err != nil {
			return err
		}
	}
	if err := copyFile("configs/application.toml", filepath.Join(dir, "application.toml")); err != nil {
		return err
	}
	port, bport := freePort(), freePort()
	env := append(cleanEnv(), "SVC_APP_PORT="+strconv.Itoa(port),
		"SVC_SECURITY_LOGIN_RATE_LIMIT=1000000000", "SVC_API_RATE_LIMIT_MAX=1000000000",
		"SVC_SECURITY_REFRESH_RATE_LIMIT=1000000000", "SVC_SECURITY_REFRESH_NOT_BEFORE=1ms")
	add := exec.Command("./svc", "--config", "application.toml", "user", "add", "bench", "--roles", "admin", "--password-stdin")
	add.Dir, add.Env, add.Stdin = dir, env, strings.NewReader(password+"\n")
	if out, err := add.CombinedOutput(); err != nil {
		return fmt.Errorf("user add: %v: %s", err, out)
	}
	fmt.Printf("minting %d tokens...\n", families)
	mintCmd := exec.Command("./mint", "-config", "application.toml", "-password", password, "-n", strconv.Itoa(families), "-c", "8", "-out", "tokens")
	mintCmd.Dir, mintCmd.Env = dir, env
	if out, err := mintCmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mint: %v: %s", err, out)
	}
	svc, err := start(dir, append(env, extra...), port, "./svc", "--config", "application.toml", "serve")
	if err != nil {
		return err
	}
	defer stop(svc)
	ref, err := start(dir, cleanEnv(), bport, "./bare", "-addr", "127.0.0.1:"+strconv.Itoa(bport))
	if err != nil {
		return err
	}
	defer stop(ref)
	c := &client{url: fmt.Sprintf("http://127.0.0.1:%d/api", port), http: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}}
	fmt.Printf("load before: %s", uptime())

	access, refresh, err := c.login()
	if err != nil {
		return err
	}
	if err := c.call("get_user_info", access, nil); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	idle, _ := smaps(svc.Process.Pid)
	bareIdle, _ := smaps(ref.Process.Pid)
	show("idle", idle)
	show("bare handler idle", bareIdle)

	if err := parallel(16, 5000, func(int) error { return c.call("get_user_info", access, nil) }); err != nil {
		return err
	}
	time.Sleep(time.Second)
	calls, _ := smaps(svc.Process.Pid)
	show("after 5000 get_user_info", calls)

	peak := watchPeak(svc.Process.Pid)
	burstErr := parallel(64, 320, func(int) error { _, _, err := c.login(); return err })
	burst := peak()
	if burstErr != nil {
		return burstErr
	}
	show("login burst peak (64 connections, 320 logins)", burst)
	time.Sleep(2 * time.Second)
	before, _ := smaps(svc.Process.Pid)

	toks, err := readLines(filepath.Join(dir, "tokens"))
	if err != nil {
		return err
	}
	if err := parallel(64, len(toks), func(i int) error { return c.call("logout", toks[i], nil) }); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	revoked, _ := smaps(svc.Process.Pid)
	show(fmt.Sprintf("after %d revoked families", len(toks)), revoked)
	// over the state after the calls, before any login: the sample right before the logouts
	// still holds the burst's garbage, which the collector returns during them
	perFamily := float64(revoked["Anonymous"]-min(before["Anonymous"], calls["Anonymous"])) / float64(len(toks))

	// the cron schedule of the mixed load: event.publish every second, durable (sys/cron)
	var sched struct{}
	if err := c.callAt("sys/cron/schedule", "create", access, map[string]any{"name": "bench-mixed", "jobName": "event.publish",
		"trigger": map[string]any{"kind": "interval", "everyMs": 1000}, "params": map[string]any{"type": "bench.mixed"}}, &sched); err != nil {
		return err
	}
	fmt.Printf("mixed load for %s, a sample every %s...\n", mixed, every)
	first, last, high, iters, err := mixedLoad(c, svc.Process.Pid, mixed, every)
	if err != nil {
		return err
	}
	var fires struct {
		Data struct {
			Total int `json:"total"`
		} `json:"data"`
	}
	if err := c.callAt("sys/cron/run", "find_page", access, map[string]any{}, &fires); err != nil {
		return err
	}
	fmt.Printf("cron fires during the mixed load: %d; uploads: %d\n", fires.Data.Total, c.uploads.Load())
	_ = refresh
	fmt.Printf("load after: %s", uptime())
	fmt.Printf("RESULT idle_anon_mib=%.1f idle_pss_mib=%.1f idle_rss_mib=%.1f bare_anon_mib=%.1f bare_pss_mib=%.1f bare_rss_mib=%.1f\n",
		mib(idle["Anonymous"]), mib(idle["Pss"]), mib(idle["Rss"]), mib(bareIdle["Anonymous"]), mib(bareIdle["Pss"]), mib(bareIdle["Rss"]))
	fmt.Printf("RESULT calls_anon_mib=%.1f calls_pss_mib=%.1f calls_rss_mib=%.1f burst_anon_mib=%.1f burst_pss_mib=%.1f burst_rss_mib=%.1f\n",
		mib(calls["Anonymous"]), mib(calls["Pss"]), mib(calls["Rss"]), mib(burst["Anonymous"]), mib(burst["Pss"]), mib(burst["Rss"]))
	fmt.Printf("RESULT families=%d revoked_anon_mib=%.1f revoked_pss_mib=%.1f revoked_rss_mib=%.1f anon_b_per_family=%.1f\n",
		len(toks), mib(revoked["Anonymous"]), mib(revoked["Pss"]), mib(revoked["Rss"]), perFamily)
	fmt.Printf("RESULT mixed_s=%.0f mixed_iterations=%d mixed_first_anon_mib=%.1f mixed_last_anon_mib=%.1f mixed_max_anon_mib=%.1f mixed_first_pss_mib=%.1f mixed_last_pss_mib=%.1f mixed_drift_pct=%.1f\n",
		mixed.Seconds(), iters, mib(first["Anonymous"]), mib(last["Anonymous"]), mib(high["Anonymous"]), mib(first["Pss"]), mib(last["Pss"]),
		100*(float64(last["Anonymous"])/float64(first["Anonymous"])-1))
	return nil
}

// mixedLoad runs the mixed iterations on 16 connections for d and samples the server's memory
// every interval; it returns the first and last samples and the one of the largest anonymous
// memory.
func mixedLoad(c *client, pid int, d, interval time.Duration) (first, last, high map[string]int64, iters int64, err error) {
	deadline := time.Now().Add(d)
	var n atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := 1; time.Now().Before(deadline); i++ {
				if err := c.mixedIteration(i%uploadEvery == 0); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				n.Add(1)
			}
		})
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for now := range t.C {
		m, err := smaps(pid)
		if err != nil {
			break
		}
		if first == nil {
			first = m
		}
		if high == nil || m["Anonymous"] > high["Anonymous"] {
			high = m
		}
		last = m
		fmt.Printf("  %5.0fs anon %.1f MiB, PSS %.1f MiB, RSS %.1f MiB, %d iterations\n",
			d.Seconds()-time.Until(deadline).Seconds(), mib(m["Anonymous"]), mib(m["Pss"]), mib(m["Rss"]), n.Load())
		if now.After(deadline) {
			break
		}
	}
	wg.Wait()
	if first == nil {
		return nil, nil, nil, 0, errors.New("mixed load: no sample")
	}
	return first, last, high, n.Load(), firstErr
}

// mixedIteration is one user's session: a password login, calls, a refresh, calls, an upload
// when upload is set, a logout.
func (c *client) mixedIteration(upload bool) error {
	access, refresh, err := c.login()
	if err != nil {
		return err
	}
	for range 20 {
		if err := c.call("get_user_info", access, nil); err != nil {
			return err
		}
	}
	var out struct {
		Data struct {
			AccessToken string `json:"accessToken"`
		} `json:"data"`
	}
	if err := c.call("refresh", "", map[string]string{"refreshToken": refresh}, &out); err != nil {
		return err
	}
	if out.Data.AccessToken != "" {
		access = out.Data.AccessToken
	}
	for range 20 {
		if err := c.call("get_user_info", access, nil); err != nil {
			return err
		}
	}
	if upload {
		if err := c.upload(access); err != nil {
			return err
		}
	}
	return c.call("logout", access, nil)
}

type client struct {
	url     string
	http    *http.Client
	uploads atomic.Int64
}

// upload sends uploadSize bytes through sys/storage as token: init_upload, its parts (one
// multipart request each, as a browser sends them), complete_upload.
func (c *client) upload(token string) error {
	var plan struct {
		Data struct {
			ClaimID   string `json:"claimId"`
			PartSize  int    `json:"partSize"`
			PartCount int    `json:"partCount"`
		} `json:"data"`
	}
	if err := c.callAt("sys/storage", "init_upload", token, map[string]any{"filename": "mixed.bin", "size": uploadSize}, &plan); err != nil {
		return err
	}
	data := bytes.Repeat([]byte("svc-mixed-load "), uploadSize/15+1)[:uploadSize]
	for n := 1; n <= plan.Data.PartCount; n++ {
		off := (n - 1) * plan.Data.PartSize
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		params, _ := json.Marshal(map[string]any{"claimId": plan.Data.ClaimID, "partNumber": n})
		for _, kv := range [][2]string{{"resource", "sys/storage"}, {"action", "upload_part"}, {"version", "v1"}, {"params", string(params)}} {
			_ = mw.WriteField(kv[0], kv[1])
		}
		fw, _ := mw.CreateFormFile("file", "blob")
		_, _ = fw.Write(data[off:min(off+plan.Data.PartSize, uploadSize)])
		_ = mw.Close()
		req, _ := http.NewRequest(http.MethodPost, c.url, &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		if err := c.send(req, "upload_part", token); err != nil {
			return err
		}
	}
	if err := c.callAt("sys/storage", "complete_upload", token, map[string]any{"claimId": plan.Data.ClaimID}); err != nil {
		return err
	}
	c.uploads.Add(1)
	return nil
}

// login logs bench in with its password and returns the token pair.
func (c *client) login() (access, refresh string, err error) {
	var out struct {
		Data struct {
			Tokens struct {
				AccessToken  string `json:"accessToken"`
				RefreshToken string `json:"refreshToken"`
			} `json:"tokens"`
		} `json:"data"`
	}
	err = c.call("login", "", map[string]string{"type": "password", "principal": "bench", "credentials": password}, &out)
	return out.Data.Tokens.AccessToken, out.Data.Tokens.RefreshToken, err
}

// call runs security/auth ACTION with params as token's bearer (callAt).
func (c *client) call(action, token string, params any, out ...any) error {
	return c.callAt("security/auth", action, token, params, out...)
}

// callAt runs resource's ACTION with params as token's bearer; any answer but code 0 is an
// error. The answer is decoded into out[0] when given.
func (c *client) callAt(resource, action, token string, params any, out ...any) error {
	if params == nil {
		params = map[string]any{}
	}
	body, _ := json.Marshal(map[string]any{"resource": resource, "action": action, "version": "v1", "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return c.send(req, action, token, out...)
}

// send sends req with token as its bearer and checks the answer's code (callAt).
func (c *client) send(req *http.Request, action, token string, out ...any) error {
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	if _, err := raw.ReadFrom(resp.Body); err != nil {
		return err
	}
	var env struct {
		Code int `json:"code"`
	}
	if err := json.Unmarshal(raw.Bytes(), &env); err != nil || env.Code != 0 {
		return fmt.Errorf("%s: status %d: %.200s", action, resp.StatusCode, raw.String())
	}
	if len(out) > 0 {
		return json.Unmarshal(raw.Bytes(), out[0])
	}
	return nil
}

// parallel runs do(i) for i in [0, n) over conns workers and returns the first error.
func parallel(conns, n int, do func(i int) error) error {
	var next atomic.Int64
	var first error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := do(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return first
}

// watchPeak samples pid's smaps_rollup every 10 ms until the returned function is called, which
// returns the fields of the sample with the largest anonymous memory.
func watchPeak(pid int) func() map[string]int64 {
	done := make(chan struct{})
	res := make(chan map[string]int64, 1)
	go func() {
		var high map[string]int64
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if m, err := smaps(pid); err == nil && (high == nil || m["Anonymous"] > high["Anonymous"]) {
				high = m
			}
			select {
			case <-done:
				res <- high
				return
			case <-t.C:
			}
		}
	}()
	return func() map[string]int64 { close(done); return <-res }
}

// smaps reads pid's /proc/PID/smaps_rollup, in bytes.
func smaps(pid int) (map[string]int64, error) { return procstat.SmapsRollup(pid) }

func show(what string, m map[string]int64) {
	fmt.Printf("%-48s anon %6.1f MiB  PSS %6.1f MiB (anon %.1f, file %.1f)  RSS %6.1f MiB\n",
		what, mib(m["Anonymous"]), mib(m["Pss"]), mib(m["Pss_Anon"]), mib(m["Pss_File"]), mib(m["Rss"]))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// start runs name in dir and waits until it answers HTTP on port.
func start(dir string, env []string, port int, name string, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	for range 300 {
		if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", port)); err == nil {
			resp.Body.Close()
			return cmd, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop(cmd)
	return nil, fmt.Errorf("%s does not answer on port %d: %.500s", name, port, stderr.String())
}

// stop ends a child and waits for it. SIGTERM, not SIGINT: a shell that runs this in the background (bench/run.sh … &) starts it
// with SIGINT ignored, which its children inherit, and the bare handler, which installs no
// handler, would then never exit (svc serve stops on either).
func stop(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
}

// cleanEnv is a child's environment (testservice.ChildEnv: without the caller's SVC_*
// configuration) less the Go runtime's GOGC and GOMEMLIMIT, so the caller's own settings do not
// change what is measured: the binary's one memory policy applies.
func cleanEnv() []string {
	var out []string
	for _, kv := range testservice.ChildEnv() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			out = append(out, kv)
		}
	}
	return out
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

func uptime() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return "loadavg " + string(b)
}

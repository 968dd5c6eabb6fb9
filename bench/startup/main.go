// Command startup measures the shipped binary's start-up and idle memory (issue #34 item 2):
//
//	startup -bin .cache/bin/svc -bare .cache/bin/bare [-rounds 5] [-port 18097]
//
// In a scratch directory holding the shipped configs/application.toml it runs `svc serve` with
// every module of the binary on (the shipped configuration, built-in user store, default
// logging) and times, from just before the process is started:
//
//   - fresh: a database that does not exist yet (file, secret and every module's migrations
//     created at start) until GET /readyz answers 200 — no user exists, so no /api call can
//     succeed yet;
//   - existing: the database of the fresh runs plus a user created with `svc user add` until
//     security/auth get_user_info answers code 0 with a token minted by an earlier process;
//   - bare: bench/api/bare (a net/http handler) until it answers, the floor of starting a Go
//     process and answering HTTP on this machine.
//
// More figures explain what other tools read (issue #43: an independent side-by-side tool read
// 99–151 ms to the first successful get_user_info where this one read 30–44 ms, and ~30 ms for
// the bare handler where this one read 4; docs/performance.md, "Start-up"):
//
//   - costs: the minor page faults and CPU time (/proc/PID/stat) of the svc and bare processes
//     at their first answer — a start is CPU spent in the kernel's page faults and in package
//     initialisers, so a machine whose page faults are slow reads every start slower;
//   - login: the existing database, a client without a token: from the start until a password
//     login and then get_user_info have succeeded — the argon2id hash of the login is in it;
//   - login on a running server: the same login and call on a server that is already up, the
//     part of the previous figure that is not start-up;
//   - cold: the existing-database figure with the binary's and the database's pages evicted
//     from the page cache before each start (posix_fadvise DONTNEED on clean pages, what a first
//     start after a reboot meets), beside the bare handler started cold the same way;
//   - coarse: the existing-database figure polled every 10 ms, as a shell loop with a sleep
//     would poll, beside the bare handler polled the same way.
//
// Then it starts svc once more, calls get_user_info, waits for the start-up work to settle and
// reads the idle resident set from /proc/PID/smaps_rollup (Rss, its anonymous part — heap,
// stacks, runtime — and its file-backed part, mostly the binary's touched pages); again after
// 5 000 more get_user_info calls over 16 connections; and again after
// one password login, whose argon2id hash is the largest allocation a client causes.
//
// Every figure is the median of the rounds; the last lines are RESULT lines for bench/run.sh.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/svc-framework/svc/bench/internal/procstat"
	"github.com/svc-framework/svc/internal/testservice"
)

// password is the bench user's password (the shipped password policy accepts it).
const password = "bench-Password-1"

func main() {
	bin := flag.String("bin", ".cache/bin/svc", "the svc binary (go build -o .cache/bin/svc ./cmd/svc)")
	bare := flag.String("bare", "", "the bare handler binary (go build ./bench/api/bare); empty skips it")
	cfg := flag.String("config", "configs/application.toml", "the configuration to copy into the scratch directory")
	rounds := flag.Int("rounds", 5, "starts per figure")
	port := flag.Int("port", 18097, "port svc listens on")
	settle := flag.Duration("settle", 3*time.Second, "wait after the first calls before reading the idle RSS")
	flag.Parse()
	if err := run(*bin, *bare, *cfg, *rounds, *port, *settle); err != nil {
		log.Fatal(err)
	}
}

func run(bin, bare, cfgPath string, rounds, port int, settle time.Duration) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if bare != "" {
		if bare, err = filepath.Abs(bare); err != nil {
			return err
		}
	}
	dir, err := os.MkdirTemp("", "svc-startup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "application.toml"), cfg, 0o600); err != nil {
		return err
	}
	s := &svc{bin: bin, dir: dir, port: port}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	var fresh []time.Duration
	for range rounds {
		if err := os.RemoveAll(filepath.Join(dir, "data")); err != nil {
			return err
		}
		d, err := s.timeTo(func() bool { return status(base+"/readyz") == http.StatusOK })
		if err != nil {
			return fmt.Errorf("fresh database: %w", err)
		}
		fresh = append(fresh, d)
	}

	if err := s.cli(password+"\n", "user", "add", "bench", "--roles", "admin", "--password-stdin"); err != nil {
		return err
	}
	var token string
	if _, err := s.timeTo(func() bool {
		token, _ = login(base)
		return token != ""
	}); err != nil {
		return fmt.Errorf("login: %w", err)
	}
	s.at = nil
	existing, err := s.times(rounds, func() bool { return userInfo(base, token) })
	if err != nil {
		return fmt.Errorf("existing database: %w", err)
	}
	existingAt := s.at

	var bareRuns []time.Duration
	bs := &svc{bin: bare, dir: dir, port: port, args: []string{"-addr", fmt.Sprintf("127.0.0.1:%d", port)}}
	bareUp := func() bool { return status(base+"/") != 0 }
	if bare != "" {
		if bareRuns, err = bs.times(rounds, bareUp); err != nil {
			return fmt.Errorf("bare: %w", err)
		}
	}
	bareAt := bs.at
	ex, err := s.explain(base, token, rounds, bs, bareUp)
	if err != nil {
		return err
	}

	mem, loaded, login, err := s.idle(base, token, settle)
	if err != nil {
		return err
	}
	fmt.Printf("fresh database → /readyz 200:         median %s  runs %v\n", ms(median(fresh)), msList(fresh))
	fmt.Printf("existing database → get_user_info 0:  median %s  runs %v\n", ms(median(existing)), msList(existing))
	if bare != "" {
		fmt.Printf("bare net/http handler → first answer: median %s  runs %v\n", ms(median(bareRuns)), msList(bareRuns))
	}
	for _, m := range []struct {
		when string
		kb   map[string]int64
	}{{"idle", mem}, {fmt.Sprintf("after %d get_user_info calls", loadCalls), loaded}, {"after one login", login}} {
		fmt.Printf("%s (+%s): Rss %.1f MiB = anonymous %.1f MiB + file-backed %.1f MiB (binary %.1f MiB on disk)\n",
			m.when, settle, mib(m.kb["Rss"]), mib(m.kb["Anonymous"]), mib(m.kb["Rss"]-m.kb["Anonymous"]), mib(fileSize(bin)))
	}
	svcFaults, svcCPU := costs("existing database → get_user_info 0", existingAt)
	bareFaults, bareCPU := costs("bare net/http handler", bareAt)
	ex.print(bare != "")
	fmt.Printf("RESULT startup_fresh_ms=%s startup_existing_ms=%s startup_bare_ms=%s\n",
		msNum(median(fresh)), msNum(median(existing)), msNum(median(bareRuns)))
	fmt.Printf("RESULT startup_login_ms=%s login_running_ms=%s startup_cold_ms=%s bare_cold_ms=%s startup_coarse_ms=%s bare_coarse_ms=%s startup_faults=%d startup_cpu_ms=%s bare_faults=%d bare_cpu_ms=%s\n",
		msNum(median(ex.login)), msNum(median(ex.loginRunning)), msNum(median(ex.cold)), msNum(median(ex.bareCold)),
		msNum(median(ex.coarse)), msNum(median(ex.bareCoarse)), svcFaults, msNum(svcCPU), bareFaults, msNum(bareCPU))
	fmt.Printf("RESULT rss_mib=%.1f anon_mib=%.1f file_mib=%.1f binary_mib=%.1f load_rss_mib=%.1f load_file_mib=%.1f login_rss_mib=%.1f login_anon_mib=%.1f\n",
		mib(mem["Rss"]), mib(mem["Anonymous"]), mib(mem["Rss"]-mem["Anonymous"]), mib(fileSize(bin)),
		mib(loaded["Rss"]), mib(loaded["Rss"]-loaded["Anonymous"]), mib(login["Rss"]), mib(login["Anonymous"]))
	return nil
}

// svc starts one binary in the scratch directory.
type svc struct {
	bin, dir string
	port     int
	args     []string      // nil: --config application.toml serve
	poll     time.Duration // 0: every half millisecond
	cold     bool          // evict the binary's and the data directory's pages before each start
	at       []procStat    // the process's counters at each first answer of timeTo
}

func (s *svc) command(args ...string) *exec.Cmd {
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	// Only what the measurement needs differs from the shipped configuration: the port, and the
	// per-client rate limits of the polling clients; the caller's own SVC_* settings are dropped.
	cmd.Env = testservice.ChildEnv("SVC_APP_PORT="+strconv.Itoa(s.port),
		"SVC_SECURITY_LOGIN_RATE_LIMIT=1000000", "SVC_API_RATE_LIMIT_MAX=1000000000")
	return cmd
}

// cli runs one svc subcommand with stdin.
func (s *svc) cli(stdin string, args ...string) error {
	cmd := s.command(append([]string{"--config", "application.toml"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("svc %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// start starts the server with its log in the scratch directory.
func (s *svc) start() (*exec.Cmd, error) {
	args := s.args
	if args == nil {
		args = []string{"--config", "application.toml", "serve"}
	}
	cmd := s.command(args...)
	logf, err := os.OpenFile(filepath.Join(s.dir, "serve.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Start()
	logf.Close()
	return cmd, err
}

// stop ends the server with SIGINT (a graceful shutdown) and waits for it.
func stop(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// timeTo starts the server, polls ok every half millisecond (s.poll when set) and returns the time from just
// before the start until ok first held; the server is stopped afterwards.
func (s *svc) timeTo(ok func() bool) (time.Duration, error) {
	if s.cold {
		if err := evict(s.bin, filepath.Join(s.dir, "data")); err != nil {
			return 0, err
		}
	}
	poll := s.poll
	if poll == 0 {
		poll = 500 * time.Microsecond
	}
	t0 := time.Now()
	cmd, err := s.start()
	if err != nil {
		return 0, err
	}
	defer stop(cmd)
	exited := make(chan struct{})
	go func() { _, _ = cmd.Process.Wait(); close(exited) }()
	for time.Since(t0) < 30*time.Second {
		if ok() {
			d := time.Since(t0)
			if st, err := readProcStat(cmd.Process.Pid); err == nil {
				s.at = append(s.at, st)
			}
			return d, nil
		}
		select {
		case <-exited:
			return 0, fmt.Errorf("%s exited before answering: see %s", s.bin, s.logTail())
		case <-time.After(poll):
		}
	}
	return 0, fmt.Errorf("no answer within 30 s: %s", s.logTail())
}

// times is timeTo rounds times.
func (s *svc) times(rounds int, ok func() bool) ([]time.Duration, error) {
	var ds []time.Duration
	for range rounds {
		d, err := s.timeTo(ok)
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// loadCalls is the number of get_user_info calls between the idle and the loaded reading.
const loadCalls = 5000

// idle starts the server, calls get_user_info, waits settle and reads /proc/PID/smaps_rollup;
// then it makes loadCalls more calls over 16 connections, waits settle and reads it again; then
// it logs in once (one argon2id hash), waits settle and reads it a third time.
func (s *svc) idle(base, token string, settle time.Duration) (idle, loaded, afterLogin map[string]int64, err error) {
	cmd, err := s.start()
	if err != nil {
		return nil, nil, nil, err
	}
	defer stop(cmd)
	deadline := time.Now().Add(30 * time.Second)
	for !userInfo(base, token) {
		if time.Now().After(deadline) {
			return nil, nil, nil, fmt.Errorf("no answer within 30 s: %s", s.logTail())
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(settle)
	if idle, err = procstat.SmapsRollup(cmd.Process.Pid); err != nil {
		return nil, nil, nil, err
	}
	var failed atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range loadCalls / 16 {
				if !userInfo(base, token) {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		return nil, nil, nil, fmt.Errorf("%d of %d get_user_info calls failed", n, loadCalls)
	}
	time.Sleep(settle)
	if loaded, err = procstat.SmapsRollup(cmd.Process.Pid); err != nil {
		return nil, nil, nil, err
	}
	if tok, err := login(base); err != nil || tok == "" {
		return nil, nil, nil, fmt.Errorf("login: %v", err)
	}
	time.Sleep(settle)
	afterLogin, err = procstat.SmapsRollup(cmd.Process.Pid)
	return idle, loaded, afterLogin, err
}

func (s *svc) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "serve.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

var client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

// status is the status of GET url, 0 when nothing answers.
func status(url string) int {
	resp, err := client.Get(url)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// apiCall posts one /api request and decodes the envelope.
func apiCall(base, token, body string, data any) (int, error) {
	req, err := http.NewRequest("POST", base+"/api", strings.NewReader(body))
	if err != nil {
		return -1, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return -1, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return -1, err
	}
	var env struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return -1, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(b))
	}
	if env.Code == 0 && data != nil {
		return 0, json.Unmarshal(env.Data, data)
	}
	return env.Code, nil
}

// login logs the bench user in and returns the access token.
func login(base string) (string, error) {
	var data struct {
		Tokens struct {
			AccessToken string `json:"accessToken"`
		} `json:"tokens"`
	}
	body := fmt.Sprintf(`{"resource":"security/auth","action":"login","version":"v1","params":{"type":"password","principal":"bench","credentials":%q}}`, password)
	code, err := apiCall(base, "", body, &data)
	if err != nil || code != 0 {
		return "", err
	}
	return data.Tokens.AccessToken, nil
}

// userInfo reports whether get_user_info succeeds with token.
func userInfo(base, token string) bool {
	code, err := apiCall(base, token, `{"resource":"security/auth","action":"get_user_info","version":"v1","params":{}}`, nil)
	return err == nil && code == 0
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return msNum(d) + " ms" }

func msNum(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) }

func msList(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = msNum(d)
	}
	return out
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

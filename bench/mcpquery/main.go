// Command mcpquery measures what MCP's database_query costs the shipped binary in memory and time
// for the answers of issue #42 item 3 — queries whose encoded answer is far larger than their
// values — on SQLite:
//
//	go build -o .cache/bin/svc ./cmd/svc && go run ./bench/mcpquery -bin .cache/bin/svc
//
// In a scratch directory holding the shipped configs/application.toml with /mcp switched on (and
// svc.mcp.query.max_sql_bytes raised to 1 MiB, so the 100 KB and 300 KB statements reach
// the database instead of being refused by their length), it creates an admin user, starts `svc
// serve` with a clean SVC_* environment, logs in, answers one small query and reads the idle
// resident set from /proc/PID/smaps_rollup. Then it sends each form ROUNDS times through POST /mcp
// (a plain JSON-RPC tools/call, as any client sends it) while sampling smaps_rollup every 10 ms,
// and prints each form's slowest answer and the peak RSS and anonymous memory over idle. The
// forms: the three (a 100 KB and a 300 KB alias over 1000 rows, 1500 NULL columns with
// 63-character names over 1000 rows, 1 MB of control characters), and two answers just under
// the 4 MiB cap that are answered — plain text and escape-heavy (every value a quote), the
// latter the most the SDK's re-encoding of the answer can weigh. -sdk serves every call through
// the MCP SDK instead of the endpoint's fast path (what a client's unusual request forms get).
//
// The bound: RSS under idle + 64 MiB, and every answer within the call's deadline
// (svc.mcp.query.timeout 10 s + 3 s).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svc-framework/svc/bench/internal/procstat"
	"github.com/svc-framework/svc/internal/testservice"
)

const password = "Bench-mcp-query-1"

// extraEnv is added to the server's clean environment.
var extraEnv []string

func main() {
	bin := flag.String("bin", ".cache/bin/svc", "the svc binary")
	cfg := flag.String("config", "configs/application.toml", "the configuration to start from")
	port := flag.Int("port", 18093, "the port svc listens on")
	rounds := flag.Int("rounds", 3, "times each form is sent")
	sdkOnly := flag.Bool("sdk", false, "serve every call through the MCP SDK (SVC_BYPASS_OFF=mcp.fastcall)")
	flag.Parse()
	if *sdkOnly {
		extraEnv = append(extraEnv, "SVC_BYPASS_OFF=mcp.fastcall")
	}
	if err := run(*bin, *cfg, *port, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "mcpquery:", err)
		os.Exit(1)
	}
}

// forms are the statements measured and whether each must answer the byte-cap error.
func forms() []struct {
	name, sql string
	tooLarge  bool
} {
	rows := "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1000) "
	cols := make([]string, 1500)
	for i := range cols {
		cols[i] = fmt.Sprintf(`NULL AS "%059d%04d"`, 0, i)
	}
	return []struct {
		name, sql string
		tooLarge  bool
	}{
		{"100 KB alias × 1000 rows", rows + `SELECT i AS "` + strings.Repeat("a", 100_000) + `" FROM c`, true},
		{"300 KB alias × 1000 rows", rows + `SELECT i AS "` + strings.Repeat("b", 300_000) + `" FROM c`, true},
		{"1500 NULL columns × 1000 rows", rows + "SELECT " + strings.Join(cols, ", ") + " FROM c", true},
		{"1 MB of control characters", "SELECT replace(hex(zeroblob(1000000)), '00', char(1)) AS v", true},
		{"answered: 1000 rows of 4 KB text", rows + "SELECT printf('%.4000c', 'x') AS v FROM c", false},
		{"answered: 1000 rows of 2 KB quotes", rows + `SELECT printf('%.2000c', '"') AS v FROM c`, false},
	}
}

func run(bin, cfgPath string, port, rounds int) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "mcpquery")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	cfg = append(cfg, "\n[svc.mcp]\nenabled = true\n[svc.mcp.query]\nmax_sql_bytes = \"1mib\"\n"...)
	if err := os.WriteFile(filepath.Join(dir, "application.toml"), cfg, 0o600); err != nil {
		return err
	}
	env := cleanEnv(port)
	add := exec.Command(bin, "--config", "application.toml", "user", "add", "bench", "--roles", "admin", "--password-stdin")
	add.Dir, add.Env, add.Stdin = dir, env, strings.NewReader(password+"\n")
	if out, err := add.CombinedOutput(); err != nil {
		return fmt.Errorf("user add: %w: %s", err, out)
	}
	srv := exec.Command(bin, "--config", "application.toml", "serve")
	srv.Dir, srv.Env = dir, env
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	token, err := waitLogin(base)
	if err != nil {
		return err
	}
	if _, isErr, _, err := query(base, token, "SELECT 1 AS one"); err != nil || isErr {
		return fmt.Errorf("a first query: error %t, %v", isErr, err)
	}
	time.Sleep(2 * time.Second) // let the start-up's workers and the first call settle
	idle, err := procstat.SmapsRollup(srv.Process.Pid)
	if err != nil {
		return err
	}
	peak := sample(srv.Process.Pid)
	var slowest time.Duration
	var maxRSS, maxAnon int64
	for _, f := range forms() {
		var worst time.Duration
		var size int
		for range rounds {
			start := time.Now()
			text, isErr, n, err := query(base, token, f.sql)
			took := time.Since(start)
			if err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			if f.tooLarge != (isErr && strings.HasPrefix(text, "The result exceeds")) {
				return fmt.Errorf("%s: error %t %.120q, want the byte-cap error %t", f.name, isErr, text, f.tooLarge)
			}
			worst, size = max(worst, took), n
		}
		slowest = max(slowest, worst)
		rss, anon := peak()
		maxRSS, maxAnon = max(maxRSS, rss), max(maxAnon, anon)
		fmt.Printf("%-36s slowest %7.1f ms  answer %8d bytes on the wire  peak RSS over idle +%.1f MiB (anonymous +%.1f)\n",
			f.name, float64(worst)/1e6, size, mib(rss-idle["Rss"]), mib(anon-idle["Anonymous"]))
	}
	rss, anon := maxRSS, maxAnon
	fmt.Printf("idle RSS %.1f MiB (anonymous %.1f); peak RSS over idle +%.1f MiB, anonymous +%.1f MiB\n",
		mib(idle["Rss"]), mib(idle["Anonymous"]), mib(rss-idle["Rss"]), mib(anon-idle["Anonymous"]))
	fmt.Printf("RESULT idle_rss_mib=%.1f peak_over_idle_mib=%.1f anon_over_idle_mib=%.1f slowest_ms=%.1f\n",
		mib(idle["Rss"]), mib(rss-idle["Rss"]), mib(anon-idle["Anonymous"]), float64(slowest)/1e6)
	return nil
}

// cleanEnv is a child's environment (testservice.ChildEnv: without the caller's SVC_*
// configuration) plus the port and rate limits the measurement needs.
func cleanEnv(port int) []string {
	env := testservice.ChildEnv("SVC_APP_PORT="+strconv.Itoa(port), "SVC_SECURITY_LOGIN_RATE_LIMIT=1000000", "SVC_API_RATE_LIMIT_MAX=1000000000")
	return append(env, extraEnv...)
}

// sample reads smaps_rollup every 10 ms; the returned function answers the largest Rss and
// Anonymous seen since its last call.
func sample(pid int) func() (rss, anon int64) {
	var (
		mu        sync.Mutex
		rss, anon int64
	)
	go func() {
		for {
			m, err := procstat.SmapsRollup(pid)
			if err != nil {
				return // the server is gone
			}
			mu.Lock()
			rss, anon = max(rss, m["Rss"]), max(anon, m["Anonymous"])
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return func() (int64, int64) {
		time.Sleep(20 * time.Millisecond) // one more sample after the last answer
		mu.Lock()
		defer mu.Unlock()
		r, a := rss, anon
		rss, anon = 0, 0
		return r, a
	}
}

var client = &http.Client{Timeout: 60 * time.Second}

// waitLogin logs the bench user in once the server answers.
func waitLogin(base string) (string, error) {
	body := fmt.Sprintf(`{"resource":"security/auth","action":"login","version":"v1","params":{"type":"password","principal":"bench","credentials":%q}}`, password)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := client.Post(base+"/api", "application/json", strings.NewReader(body))
		if err != nil {
			continue
		}
		var env struct {
			Code int `json:"code"`
			Data struct {
				Tokens struct {
					AccessToken string `json:"accessToken"`
				} `json:"tokens"`
			} `json:"data"`
		}
		err = json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		if err == nil && env.Code == 0 {
			return env.Data.Tokens.AccessToken, nil
		}
	}
	return "", errors.New("no login within 60 s")
}

// query sends one tools/call of database_query and returns its first text, whether it is a tool
// error and the bytes of the answer on the wire.
func query(base, token, sql string) (text string, isErr bool, n int, err error) {
	args, _ := json.Marshal(map[string]any{"name": "database_query", "arguments": map[string]string{"sql": sql}})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + string(args) + `}`
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	if err != nil {
		return "", false, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return "", false, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", false, 0, err
	}
	data := raw
	if i := bytes.Index(raw, []byte("data: ")); i >= 0 {
		data = raw[i+len("data: "):]
	}
	var msg struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &msg); err != nil {
		return "", false, len(raw), fmt.Errorf("%s: %.200s", resp.Status, raw)
	}
	if msg.Error != nil || len(msg.Result.Content) == 0 {
		return "", false, len(raw), fmt.Errorf("%s: %.200s", resp.Status, raw)
	}
	return msg.Result.Content[0].Text, msg.Result.IsError, len(raw), nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

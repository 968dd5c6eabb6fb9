// Command audit is the load tool of bench/audit/run.sh: it signs in to a running `svc serve`
// with a real password login, then calls one audited operation, security/user update (the
// user's display name, a committed write), from C connections for a fixed time, checks every
// answer (code 0) and prints one line:
//
//	RESULT rps=2345.6 calls=11728 errors=0 p50=20.1 p99=61.3 cpu_us=310.2
//
// cpu_us (with -pid, the server's process id) is the server's CPU time (utime + stime from
// /proc, clock ticks of 10 ms) over the measured run divided by its calls: on a shared machine
// whose other jobs make throughput swing, the CPU an audited call costs is the steadier figure.
// run.sh starts the server with the trail on and off in alternating rounds and compares the
// two (issue #47: on/off ≥ 0.95).
//
//	go run ./bench/audit -url http://127.0.0.1:PORT -user bench -password PW -c 32 -d 10s
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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// envelope is the part of an /api answer the tool reads.
type envelope struct {
	Code int `json:"code"`
	Data struct {
		ID     string `json:"id"`
		Tokens struct {
			AccessToken string `json:"accessToken"`
		} `json:"tokens"`
	} `json:"data"`
}

func main() {
	url := flag.String("url", "", "base URL of svc")
	user := flag.String("user", "bench", "user name to sign in as (holds security.user.update)")
	password := flag.String("password", "", "its password")
	conns := flag.Int("c", 32, "concurrent connections")
	dur := flag.Duration("d", 10*time.Second, "measuring time")
	warm := flag.Duration("warm", 2*time.Second, "warm-up time, not counted")
	pid := flag.Int("pid", 0, "the server's process id, for its CPU time per call (0: not measured)")
	flag.Parse()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conns}, Timeout: 30 * time.Second}
	login, err := call(client, *url, "", "security/auth", "login",
		map[string]string{"type": "password", "principal": *user, "credentials": *password})
	if err != nil {
		log.Fatalf("login: %v", err)
	}
	token := login.Data.Tokens.AccessToken
	info, err := call(client, *url, token, "security/auth", "get_user_info", map[string]string{})
	if err != nil {
		log.Fatalf("get_user_info: %v", err)
	}
	id := info.Data.ID
	run(client, *url, token, id, *conns, *warm)
	cpu0 := cpuTicks(*pid)
	calls, errs, lat, wall := run(client, *url, token, id, *conns, *dur)
	cpuUs := float64(cpuTicks(*pid)-cpu0) * 10_000 / float64(max(calls, 1))
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	fmt.Printf("RESULT rps=%.1f calls=%d errors=%d p50=%.1f p99=%.1f cpu_us=%.1f\n", float64(calls)/wall.Seconds(), calls, errs, pct(.5), pct(.99), cpuUs)
}

// cpuTicks is the utime + stime of process pid in clock ticks (fields 14 and 15 of
// /proc/PID/stat, counted after the command name's closing parenthesis); 0 without a pid.
func cpuTicks(pid int) int64 {
	if pid == 0 {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		log.Fatalf("cpu of %d: %v", pid, err)
	}
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// run calls security/user update from conns workers until d has passed and answers the calls
// made, the failed ones, each call's latency and the wall time.
func run(client *http.Client, url, token, id string, conns int, d time.Duration) (int64, int64, []time.Duration, time.Duration) {
	var calls, errs atomic.Int64
	var mu sync.Mutex
	var all []time.Duration
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := 0; time.Now().Before(end); i++ {
				t := time.Now()
				_, err := call(client, url, token, "security/user", "update",
					map[string]string{"id": id, "displayName": fmt.Sprintf("bench %d-%d", w, i)})
				mine = append(mine, time.Since(t))
				calls.Add(1)
				if err != nil {
					errs.Add(1)
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return calls.Load(), errs.Load(), all, time.Since(start)
}

// call posts one envelope and fails unless the answer is code 0.
func call(client *http.Client, url, token, resource, action string, params any) (*envelope, error) {
	body, err := json.Marshal(map[string]any{"resource": resource, "action": action, "version": "v1", "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, url+"/api", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	if env.Code != 0 {
		return nil, fmt.Errorf("%s %s: %s", resource, action, raw)
	}
	return &env, nil
}

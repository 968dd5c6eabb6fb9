// Command load is the helper of bench/real/run.sh for what wrk cannot do with one request body:
//
//	load -mode mint   -url URL -user NAME -password PW -n N -c C -out FILE
//	    logs in N times over C connections and writes the N access tokens to FILE, one a line;
//	load -mode logout -url URL -tokens FILE -c C
//	    calls logout once with every token of FILE over C connections (each logout needs a
//	    fresh token) and prints a RESULT line like the wrk scripts': requests/s, p50, p99;
//	load -mode use -url URL -tokens FILE -c C
//	    calls get_user_info once with every line of FILE (a token used before its logout, the
//	    flow users run; a file of one token repeated gives the steady call) and prints the same.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-framework/svc/bench/internal/latency"
)

type result struct {
	Code int `json:"code"`
	Data struct {
		Tokens struct {
			AccessToken string `json:"accessToken"`
		} `json:"tokens"`
	} `json:"data"`
}

func main() {
	mode := flag.String("mode", "", "mint, logout or use")
	url := flag.String("url", "", "base URL of svc")
	user := flag.String("user", "bench", "user name (mint)")
	password := flag.String("password", "", "password (mint)")
	n := flag.Int("n", 100, "logins (mint)")
	conns := flag.Int("c", 64, "concurrent connections")
	out := flag.String("out", "", "token file to write (mint)")
	tokens := flag.String("tokens", "", "token file to read (logout, use)")
	flag.Parse()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conns}, Timeout: 30 * time.Second}
	switch *mode {
	case "mint":
		body := fmt.Sprintf(`{"resource":"security/auth","action":"login","version":"v1","params":{"type":"password","principal":%q,"credentials":%q}}`, *user, *password)
		toks, lat := run(*n, *conns, func(int) (string, error) { return call(client, *url, "", body) })
		if err := os.WriteFile(*out, []byte(strings.Join(toks, "\n")+"\n"), 0o600); err != nil {
			log.Fatal(err)
		}
		report(lat)
	case "logout", "use":
		toks := readLines(*tokens)
		action := map[string]string{"logout": "logout", "use": "get_user_info"}[*mode]
		body := `{"resource":"security/auth","action":"` + action + `","version":"v1","params":{}}`
		_, lat := run(len(toks), *conns, func(i int) (string, error) { return call(client, *url, toks[i], body) })
		report(lat)
	default:
		log.Fatal("-mode must be mint, logout or use")
	}
}

// latencies are the per-request durations of one run and its wall time.
type latencies struct {
	each   []time.Duration
	wall   time.Duration
	errors int64
}

// run calls do(i) for i in [0, n) over conns workers and returns the non-empty answers in
// order of i.
func run(n, conns int, do func(i int) (string, error)) ([]string, latencies) {
	answers := make([]string, n)
	each := make([]time.Duration, n)
	var next, errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				t0 := time.Now()
				a, err := do(i)
				each[i] = time.Since(t0)
				if err != nil {
					errs.Add(1)
					continue
				}
				answers[i] = a
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	return slices.DeleteFunc(answers, func(s string) bool { return s == "" }), latencies{each: each, wall: wall, errors: errs.Load()}
}

// call posts body and returns the access token of a login answer ("ok" for other answers with
// code 0); any other answer is an error.
func call(client *http.Client, url, token, body string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, url+"/api", bytes.NewBufferString(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var r result
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK || r.Code != 0 {
		return "", fmt.Errorf("status %d code %d", resp.StatusCode, r.Code)
	}
	if r.Data.Tokens.AccessToken != "" {
		return r.Data.Tokens.AccessToken, nil
	}
	return "ok", nil
}

func report(l latencies) {
	fmt.Printf("RESULT rps=%.0f p50_ms=%.2f p99_ms=%.2f secs=%.2f errors=%d non2xx=0\n",
		float64(len(l.each))/l.wall.Seconds(), latency.Millis(l.each, 0.50), latency.Millis(l.each, 0.99), l.wall.Seconds(), l.errors)
}

func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			out = append(out, line)
		}
	}
	return out
}

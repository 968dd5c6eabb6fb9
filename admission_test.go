package svc_test

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// Issue #42 item 2 at test scale: a 512 KiB body limit, a 4 MiB budget (512 KiB kept for small
// requests, of which one address holds at most 32 KiB), 512 KiB per client address, and a
// body held in memory must average 16 KiB/s over its life.
const (
	admLimit     = 512 << 10
	admBudget    = 4 << 20
	admHoldRate  = 16 << 10
	admMinRate   = 1000
	admGrace     = 300 * time.Millisecond
	admWindow    = 3 * time.Second // how long the other client is measured while attackers send
	admMaxAnswer = 2 * time.Second
)

// TestSlowBodiesCannotDenyAPI is the attack test of issue #42 item 2 through the real boot
// chain, on loopback only: 2, 8 and 64 slow clients, from one address and from several
// (127.0.0.2 and up), each declaring a body of the limit, sending three quarters of it at
// once (so it holds as much as it may for as long as the rules let it) and then trickling the
// rest just above body_min_rate, reconnecting whenever the server ends a body, for the whole
// measurement. Meanwhile another client (127.0.0.1) calls login and get_user_info in a loop:
// every answer must come within 2 s and none may be 503. Bounded: at most 64 connections, each
// flavour runs about admWindow plus a second to set up.
func TestSlowBodiesCannotDenyAPI(t *testing.T) {
	t.Parallel()
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) {
		c.App.BodyLimit = admLimit
		c.App.BodyMemoryBudget = admBudget
		c.App.BodyMemoryPerClient = admLimit
		c.App.BodyMemoryRate = admHoldRate
		c.App.BodyMinRate = admMinRate
		c.App.BodyMinRateGrace = admGrace
		c.App.BodyReadIdleTimeout = 5 * time.Second
		c.API.RateLimit.Max = 1 << 30 // the measuring client calls in a loop
		c.Security.LoginRateLimit = 1 << 30
	}))
	token := srv.Token(t, svctest.User("alice"))
	addr := srv.HTTP.Listener.Addr().String()
	for _, tt := range []struct{ clients, addresses int }{
		{2, 1}, {8, 1}, {64, 1}, {2, 2}, {8, 8}, {64, 8},
	} {
		t.Run(fmt.Sprintf("%d clients from %d addresses", tt.clients, tt.addresses), func(t *testing.T) {
			a := startAttack(t, addr, tt.clients, tt.addresses)
			defer a.stop()
			svctest.Eventually(t, 10*time.Second, func() bool { return a.sending.Load() >= int64(tt.clients) },
				"every attacker sending")
			var worst time.Duration
			calls := 0
			for end := time.Now().Add(admWindow); time.Now().Before(end); calls++ {
				start := time.Now()
				login := srv.Call(t, security.ResourceAuth, "login",
					map[string]any{"type": "password", "principal": "nobody", "credentials": "x"})
				took := time.Since(start)
				worst = max(worst, took)
				if login.Status == 503 || took > admMaxAnswer {
					t.Errorf("login under attack: HTTP %d code %d after %s, want an answer within %s",
						login.Status, login.Code, took, admMaxAnswer)
				}
				start = time.Now()
				info := srv.Call(t, svctest.ResourceAuth, "get_user_info", nil, svctest.WithToken(token))
				took = time.Since(start)
				worst = max(worst, took)
				if info.Code != 0 || took > admMaxAnswer {
					t.Errorf("get_user_info under attack: HTTP %d code %d after %s, want 0 within %s",
						info.Status, info.Code, took, admMaxAnswer)
				}
			}
			t.Logf("%d call pairs, slowest answer %s; attackers: %d connections, %d ended by the server, %d KiB sent",
				calls, worst.Round(time.Millisecond), a.conns.Load(), a.ended.Load(), a.sent.Load()>>10)
		})
	}
}

// attack runs slow clients until stop.
type attack struct {
	done    chan struct{}
	wg      sync.WaitGroup
	sending atomic.Int64 // attackers past their burst, trickling
	conns   atomic.Int64 // connections opened
	ended   atomic.Int64 // bodies the server ended (refusal, deadline)
	sent    atomic.Int64 // bytes sent
}

// startAttack starts n slow clients spread over addresses loopback addresses 127.0.0.2 and up.
func startAttack(t *testing.T, addr string, n, addresses int) *attack {
	t.Helper()
	a := &attack{done: make(chan struct{})}
	for i := 0; i < n; i++ {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%addresses))}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			counted := false
			for {
				select {
				case <-a.done:
					return
				default:
				}
				if a.slowBody(addr, local, &counted) {
					a.ended.Add(1)
				}
				select { // a refused attacker comes back, but not in a busy loop
				case <-a.done:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	return a
}

// slowBody sends one body: headers declaring admLimit bytes, three quarters of it at once, the
// rest at 1.1 × body_min_rate. It reports whether the server ended it (a write failed or an
// answer came) before stop.
func (a *attack) slowBody(addr string, local *net.TCPAddr, counted *bool) bool {
	d := net.Dialer{LocalAddr: local, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return true
	}
	a.conns.Add(1)
	defer conn.Close()
	answered := make(chan struct{})
	go func() { // an answer (503, 400) means the server is done with this body
		_, _ = conn.Read(make([]byte, 1))
		close(answered)
	}()
	head := fmt.Sprintf("POST /api HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", admLimit)
	body := `{"resource":"security/auth","action":"login","version":"v1","params":{"pad":"` + strings.Repeat("x", admLimit)
	burst := admLimit * 3 / 4
	if _, err := io.WriteString(conn, head+body[:burst]); err != nil {
		return true
	}
	a.sent.Add(int64(burst))
	if !*counted {
		*counted = true
		a.sending.Add(1)
	}
	const chunk = 110 // every 100 ms: 1100 B/s, above body_min_rate
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for off := burst; off < admLimit; off += chunk {
		select {
		case <-a.done:
			return false
		case <-answered:
			return true
		case <-tick.C:
		}
		if _, err := io.WriteString(conn, body[off:min(off+chunk, admLimit)]); err != nil {
			return true
		}
		a.sent.Add(chunk)
	}
	return false
}

// stop ends every attacker and waits for them.
func (a *attack) stop() {
	close(a.done)
	a.wg.Wait()
}

package approvalbench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/uptrace/bun"
)

// stmtCounter is a bun.QueryHook counting every statement the server's database runs (the
// engine's, the outbox relay's, BEGIN and COMMIT), in total and by verb and table, so the
// benchmark reports statements per instance and can print where they go.
type stmtCounter struct {
	on    atomic.Bool
	total atomic.Int64
	mu    sync.Mutex
	kinds map[string]int64
}

var _ bun.QueryHook = (*stmtCounter)(nil)

func newStmtCounter() *stmtCounter { return &stmtCounter{kinds: map[string]int64{}} }

// BeforeQuery does nothing.
func (c *stmtCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

// AfterQuery counts the statement while the counter is on.
func (c *stmtCounter) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if !c.on.Load() {
		return
	}
	c.total.Add(1)
	k := stmtKind(e.Query)
	c.mu.Lock()
	c.kinds[k]++
	c.mu.Unlock()
}

// reset zeroes the counts and turns counting on.
func (c *stmtCounter) reset() {
	c.mu.Lock()
	clear(c.kinds)
	c.mu.Unlock()
	c.total.Store(0)
	c.on.Store(true)
}

// breakdown lists the counts per instance by kind, largest first.
func (c *stmtCounter) breakdown(instances int64) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := slices.SortedFunc(maps.Keys(c.kinds), func(a, b string) int { return int(c.kinds[b] - c.kinds[a]) })
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %6.2f  %s\n", float64(c.kinds[k])/float64(instances), k)
	}
	return b.String()
}

// stmtKind is the verb of q and the first table it names ("SELECT apv_task").
func stmtKind(q string) string {
	f := strings.Fields(q)
	if len(f) == 0 {
		return "?"
	}
	verb := strings.ToUpper(f[0])
	if verb == "WITH" {
		verb = "WITH…UPDATE"
	}
	for i := 0; i+1 < len(f); i++ {
		switch strings.ToUpper(f[i]) {
		case "FROM", "INTO", "UPDATE":
			t := strings.Trim(f[i+1], `"`+"`")
			if strings.HasPrefix(t, "apv_") || strings.HasPrefix(t, "sys_") {
				return verb + " " + t + forUpdate(q)
			}
		}
	}
	return verb
}

// forUpdate marks locking reads.
func forUpdate(q string) string {
	if strings.Contains(q, "FOR UPDATE") {
		return " FOR UPDATE"
	}
	return ""
}

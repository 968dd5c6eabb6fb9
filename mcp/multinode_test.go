package mcp_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/mcp"
	"github.com/svc-framework/svc/svctest"
)

// roundRobin is a load balancer without stickiness: request i goes to node i mod len(nodes).
type roundRobin struct {
	next    atomic.Uint64
	proxies []*httputil.ReverseProxy
	hits    []atomic.Int64
}

func newRoundRobin(t *testing.T, urls ...string) *roundRobin {
	t.Helper()
	rr := &roundRobin{hits: make([]atomic.Int64, len(urls))}
	for _, u := range urls {
		target, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		p := httputil.NewSingleHostReverseProxy(target)
		p.FlushInterval = -1 // stream server-sent events as they come
		rr.proxies = append(rr.proxies, p)
	}
	return rr
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int((rr.next.Add(1) - 1) % uint64(len(rr.proxies)))
	rr.hits[i].Add(1)
	rr.proxies[i].ServeHTTP(w, r)
}

// TestTwoNodes: one SDK client session through a round-robin balancer over two nodes works: the
// endpoint is stateless, so no request depends on the node that answered the one before.
func TestTwoNodes(t *testing.T) {
	t.Parallel()
	a, b := newServer(t, config.SQLite), newServer(t, config.SQLite)
	rr := newRoundRobin(t, a.URL, b.URL)
	lb := httptest.NewServer(rr)
	t.Cleanup(lb.Close)

	cs, err := connect(t, lb.URL, a.Token(t, svctest.User("ada", "querier", "schema")))
	if err != nil {
		t.Fatalf("connect through the balancer: %v", err)
	}
	for i := range 3 {
		if names := toolNames(t, cs); !slices.Contains(names, mcp.QueryTool) || !slices.Contains(names, "sys.schema.list_tables") {
			t.Fatalf("tools/list %d = %v", i, names)
		}
		if rows := query(t, cs, "SELECT ? AS i", i); len(rows) != 1 || rows[0]["i"] != float64(i) {
			t.Fatalf("database_query %d = %v", i, rows)
		}
		if text, isErr := call(t, cs, "sys.schema.list_tables", nil); isErr {
			t.Fatalf("sys.schema.list_tables %d: %s", i, text)
		}
	}
	for i := range rr.hits {
		if n := rr.hits[i].Load(); n < 4 {
			t.Errorf("node %d answered %d requests, want at least 4 (the session must span both nodes)", i, n)
		}
	}
}

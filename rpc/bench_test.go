package rpc

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// discardWriter is a ResponseWriter that keeps the status and drops the body.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.h }

func (w *discardWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}

func (w *discardWriter) WriteHeader(s int) { w.status = s }

// rewindBody is a request body that can be read again without allocating.
type rewindBody struct {
	b []byte
	r bytes.Reader
}

func (b *rewindBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *rewindBody) Close() error               { return nil }
func (b *rewindBody) rewind()                    { b.r.Reset(b.b) }

// benchStrategy accepts one token and returns a shared principal: the cheapest real strategy.
type benchStrategy struct{}

func (benchStrategy) Name() string { return StrategyBearer }

func (benchStrategy) Authenticate(_ context.Context, req AuthRequest) (*Principal, error) {
	if req.Request.Header.Get("Authorization") != "Bearer bench" {
		return nil, ErrUnauthenticated
	}
	return alice, nil
}

type benchParams struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

type benchResult struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	OK   bool   `json:"ok"`
}

func benchHandler(_ context.Context, _ Call, p benchParams) (benchResult, error) {
	return benchResult{ID: p.ID, Name: p.Name, OK: true}, nil
}

// benchEngine uses the default rate limit (100 per 5m) with a clock that moves 10s per reading,
// so every call is admitted on the path real traffic takes, headers included.
func benchEngine(b *testing.B) *Engine {
	var ticks atomic.Int64
	base := time.Now()
	clock := func() time.Time { return base.Add(time.Duration(ticks.Add(1)) * 10 * time.Second) }
	e, err := NewEngine(EngineConfig{Clock: clock})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.RegisterStrategy(benchStrategy{}); err != nil {
		b.Fatal(err)
	}
	err = e.Register(Resource{Name: "bench/things", Ops: []Op{
		Handle("get", benchHandler),
		Handle("get_public", benchHandler, Public()),
	}})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Validate(); err != nil {
		b.Fatal(err)
	}
	return e
}

func benchDispatch(b *testing.B, action string) {
	e := benchEngine(b)
	body := &rewindBody{b: []byte(`{"resource":"bench/things","action":"` + action +
		`","version":"v1","params":{"id":9007199254740993,"name":"widget"}}`)}
	r := httptest.NewRequest(http.MethodPost, "/api", nil)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer bench")
	r = r.WithContext(WithRequestInfo(r.Context(), RequestInfo{ID: "bench-request", ClientIP: "10.0.0.1"}))
	r.Body, r.ContentLength = body, int64(len(body.b))
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		body.rewind()
		clear(w.h)
		e.ServeHTTP(w, r)
	}
	if w.status != http.StatusOK {
		b.Fatalf("status = %d", w.status)
	}
}

// BenchmarkDispatch is one authenticated call with small params, end to end through the engine.
func BenchmarkDispatch(b *testing.B) { benchDispatch(b, "get") }

// BenchmarkDispatchPublic is the same call on a public operation.
func BenchmarkDispatchPublic(b *testing.B) { benchDispatch(b, "get_public") }

// BenchmarkDispatchParallel runs BenchmarkDispatch's call on every core.
func BenchmarkDispatchParallel(b *testing.B) {
	e := benchEngine(b)
	raw := []byte(`{"resource":"bench/things","action":"get","version":"v1","params":{"id":1,"name":"widget"}}`)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		body := &rewindBody{b: raw}
		r := httptest.NewRequest(http.MethodPost, "/api", nil)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer bench")
		r = r.WithContext(WithRequestInfo(r.Context(), RequestInfo{ID: "bench-request", ClientIP: "10.0.0.1"}))
		r.Body, r.ContentLength = body, int64(len(raw))
		w := &discardWriter{h: http.Header{}}
		for pb.Next() {
			body.rewind()
			clear(w.h)
			e.ServeHTTP(w, r)
		}
	})
}

// BenchmarkRateLimiter counts calls over 4096 keys, sequentially and from every core.
func BenchmarkRateLimiter(b *testing.B) {
	clock := newFakeClock()
	l := NewRateLimiter(clock.Now)
	limit := Limit{Max: 1 << 30, Period: time.Minute}
	keys := make([]string, 4096)
	for i := range keys {
		keys[i] = "sys/storage:v1:upload_part:10.0." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256) + ":u-" + strconv.Itoa(i)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			l.Allow(keys[i&4095], limit)
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			i := int(next.Add(1) * 977)
			for pb.Next() {
				l.Allow(keys[i&4095], limit)
				i++
			}
		})
	})
}

package integration

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
)

// TestScriptCacheExpiry (issue #31 item 12): every entry expires by the injected clock — one set
// without a ttl, or with one longer than svc.integration.script_cache.ttl, lives that long — and
// what expired no longer counts against the cap.
func TestScriptCacheExpiry(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	c := newScriptCache(config.ScriptCache{MaxBytes: 1 << 20, TTL: time.Hour}, func() time.Time { return now })
	for _, e := range []struct {
		key string
		ttl time.Duration
	}{{"default", 0}, {"minute", time.Minute}, {"two days", 48 * time.Hour}} {
		if err := c.set(e.key, `"v"`, e.ttl); err != nil {
			t.Fatal(err)
		}
	}
	start := now
	for _, step := range []struct {
		at   time.Duration
		want map[string]bool
	}{
		{59 * time.Second, map[string]bool{"default": true, "minute": true, "two days": true}},
		{time.Minute, map[string]bool{"default": true, "minute": false, "two days": true}},
		{time.Hour - time.Second, map[string]bool{"default": true, "two days": true}},
		{time.Hour, map[string]bool{"default": false, "two days": false}},
	} {
		now = start.Add(step.at)
		for key, want := range step.want {
			if _, ok := c.get(key); ok != want {
				t.Errorf("at +%v: %q present = %v, want %v", step.at, key, ok, want)
			}
		}
	}
	if b := c.bytes(); b != 0 {
		t.Errorf("bytes after every entry expired = %d, want 0", b)
	}
}

// TestScriptCacheCap: the entries hold at most max_bytes; a set over it evicts the least
// recently used (a get counts as a use); an entry larger than the whole cap is refused.
func TestScriptCacheCap(t *testing.T) {
	t.Parallel()
	c := newScriptCache(config.ScriptCache{MaxBytes: 10_000, TTL: time.Hour}, time.Now)
	value := strings.Repeat("x", 1000-cacheEntryOverhead-2) // with a 2-byte key: 1000 bytes an entry
	for i := 10; i < 20; i++ {
		if err := c.set(strconv.Itoa(i), value, 0); err != nil {
			t.Fatal(err)
		}
	}
	if b := c.bytes(); b != 10_000 {
		t.Fatalf("bytes = %d, want 10000", b)
	}
	c.get("10") // the oldest is used again: "11" is now the least recently used
	for i := 20; i < 25; i++ {
		c.set(strconv.Itoa(i), value, 0)
	}
	if b := c.bytes(); b > 10_000 {
		t.Errorf("bytes = %d, over the cap", b)
	}
	for key, want := range map[string]bool{"10": true, "11": false, "15": false, "16": true, "24": true} {
		if _, ok := c.get(key); ok != want {
			t.Errorf("%q present = %v, want %v", key, ok, want)
		}
	}
	if err := c.set("big", strings.Repeat("y", 10_000), 0); err == nil {
		t.Error("an entry over the whole cap was stored")
	}
}

// TestScriptCacheFilledByScript: a script setting far more than the cap leaves the cache at
// most at the cap, its latest entries kept.
func TestScriptCacheFilledByScript(t *testing.T) {
	t.Parallel()
	const capBytes = 1 << 20
	e := NewEngine(Limits{Worker: TestWorker}, config.ScriptCache{MaxBytes: capBytes}, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	out, err := e.runBody(context.Background(), "fill.js",
		"const v = 'x'.repeat(100000); for (let i = 0; i < 500; i++) cache.set('k' + i, v); return [cache.has('k0'), cache.has('k499')]", nil)
	if err != nil || string(out) != "[false,true]" {
		t.Errorf("script: %s %v, want [false,true]", out, err)
	}
	if b := e.cache.bytes(); b > capBytes || b < capBytes/2 {
		t.Errorf("cache holds %d bytes, want at most %d (and most of it used)", b, capBytes)
	}
}

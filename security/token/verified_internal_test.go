package token

import (
	"strconv"
	"testing"
	"time"

	"github.com/svc-framework/svc/rpc"
)

func TestVerifiedCacheStaysBounded(t *testing.T) {
	c := newVerifiedCache()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &rpc.Principal{ID: "u"}
	for i := range 3 * verifiedMax {
		c.put("token-"+strconv.Itoa(i), verifiedToken{principal: p, expires: now.Add(time.Hour)}, now)
	}
	if n := len(c.m); n > verifiedMax {
		t.Errorf("cache holds %d tokens, want at most %d", n, verifiedMax)
	}
	last := "token-" + strconv.Itoa(3*verifiedMax-1)
	if _, ok := c.get(last); !ok {
		t.Error("the token just added was evicted")
	}
	v, _ := c.get(last)
	cp := v.copyPrincipal()
	cp.ID = "changed"
	if v2, _ := c.get(last); v2.principal.ID != "u" {
		t.Error("changing a returned principal changed the cached one")
	}
}

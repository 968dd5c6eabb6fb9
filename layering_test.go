package svc_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRPCImportsNoDataLayer (issue #32 item 10): the /api engine depends on no database, Redis or
// event bus package; adapters onto them (the bus audit sink) live in this package.
func TestRPCImportsNoDataLayer(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "./rpc").Output()
	if err != nil {
		t.Fatalf("go list -deps ./rpc: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/svc-framework/svc/db", "github.com/svc-framework/svc/event",
			"github.com/svc-framework/svc/kv", "github.com/uptrace/bun", "github.com/redis/go-redis"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("rpc depends on %s", dep)
			}
		}
	}
}

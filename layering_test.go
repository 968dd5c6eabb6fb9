package svc_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"strings"
	"testing"
)

// TestNoInitOutsideCmd (issue #32 item 2; the house plan: "no init() registration"): no Go file of
// the module but tests and cmd/ declares an init function; what a package needs is passed to it.
// initAllowed names the exceptions, each with why only an init can do it (docs/architecture.md,
// "Named devices").
func TestNoInitOutsideCmd(t *testing.T) {
	t.Parallel()
	initAllowed := map[string]string{
		// The script worker's process switch (issue #42 item 4): a worker is the embedding binary
		// started again with a marker argument, and it must become a worker before the host's
		// main runs anything, in the svc binary, a host's binary and a test binary alike. It
		// registers nothing.
		"integration/worker.go": "script worker process switch",
	}
	var found []string
	walkGoFiles(t, func(dir string) bool { return dir == "cmd" }, func(fset *token.FileSet, f *ast.File) {
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				if name := fset.Position(fn.Pos()).Filename; initAllowed[strings.TrimPrefix(name, "./")] == "" {
					found = append(found, name)
				}
			}
		}
	})
	if len(found) > 0 {
		t.Errorf("init functions outside tests and cmd/: %v", found)
	}
}

// TestRPCImportsNoDataLayer (issue #32 item 10): the /api engine depends on no database, Redis or
// event bus package; adapters onto them (the bus audit sink) live in this package.
func TestRPCImportsNoDataLayer(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go tool: %v", err)
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

// TestTelemetryReadsNoModule (issue #32 item 7): every module registers its own series on
// app.Deps.Metrics; the root's telemetry.go keeps only the bus's collectors (process and engine
// series come with ops.New), so it imports no module package.
func TestTelemetryReadsNoModule(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "telemetry.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	modules := []string{"security", "storage", "schema", "integration", "approval", "monitor", "cron", "push", "mcp", "audit"}
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		for _, m := range modules {
			if path == "github.com/svc-framework/svc/"+m {
				t.Errorf("telemetry.go imports the %s module: its metrics belong in %s/metrics.go", m, m)
			}
		}
	}
}

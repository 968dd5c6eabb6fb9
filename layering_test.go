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

// builtInModules are the module packages buildModules (boot.go) builds; ops and the bus are
// platform packages with a Module of their own (docs/architecture.md, Layers).
var builtInModules = []string{"audit", "security", "storage", "schema", "integration", "monitor", "backup", "cron", "push", "approval", "mcp", "console"}

// moduleEdges are the imports from one module's tree into another's that are allowed, each with
// its reason. None exists today: what one module needs from another reaches it as an interface
// in its Options, adapted in wiring.go.
var moduleEdges = map[[2]string]string{}

// TestModulesImportNoModule (issue #44 item 3; docs/architecture.md: "Modules never import each
// other"): no non-test package in one module's tree imports a package of another module's tree,
// unless moduleEdges names the edge and why. Tests may import any module (they boot the whole
// server through svctest).
func TestModulesImportNoModule(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go tool: %v", err)
	}
	const root = "github.com/svc-framework/svc/"
	owner := func(path string) string { // the module whose tree holds path, or ""
		for _, m := range builtInModules {
			if path == root+m || strings.HasPrefix(path, root+m+"/") {
				return m
			}
		}
		return ""
	}
	args := []string{"list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}
	for _, m := range builtInModules {
		args = append(args, "./"+m+"/...")
	}
	out, err := exec.Command(goTool, args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from := owner(fields[0])
		for _, imp := range fields[1:] {
			to := owner(imp)
			if to == "" || to == from {
				continue
			}
			if _, ok := moduleEdges[[2]string{from, to}]; !ok {
				t.Errorf("module %s imports module %s (%s → %s): pass it as an interface in Options (wiring.go)", from, to, fields[0], imp)
			}
		}
	}
}

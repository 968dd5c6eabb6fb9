// Command coldbuild measures what the first `go run ./cmd/svc serve` on a fresh machine costs:
// it builds a package with an empty build cache (GOCACHE in a temporary directory; the module
// cache is kept, so nothing is downloaded) and `-debug-actiongraph`, then sums the CPU time
// (user + system) of every compile, assemble and link action, by module and by package. The
// same is done for a reference in the same run, a bare net/http server (bench/api/bare) that
// needs only the standard library, so the ratio says what svc's own code and its dependencies
// add, whatever the machine's speed or load (CPU time moves much less with load than wall time).
//
//	go run ./bench/coldbuild                    # ./cmd/svc against ./bench/api/bare
//	go run ./bench/coldbuild -top 30 -pkg ./cmd/svc -ref ""
//
// It prints the modules and packages that cost most, then one line
//
//	RESULT cpu_s=264.0 actions=683 wall_s=1296.7 ref_cpu_s=… ref_actions=…
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/svc-framework/svc/internal/testservice"
)

// action is the part of one `go build -debug-actiongraph` entry this tool reads: the package,
// what was done to it, and the CPU time of the tool that did it (nanoseconds; zero when the
// action ran no tool).
type action struct {
	Mode      string
	Package   string
	CmdUser   int64
	CmdSys    int64
	NeedBuild bool
}

// build is one cold build's cost.
type build struct {
	cpu      time.Duration
	actions  int // actions that ran a tool (compile, asm, cgo, link)
	packages int // packages compiled
	wall     time.Duration
	byModule map[string]time.Duration
	byPkg    map[string]time.Duration
}

func main() {
	pkg := flag.String("pkg", "./cmd/svc", "package to build cold")
	ref := flag.String("ref", "./bench/api/bare", "reference package built cold in the same run (empty: none)")
	top := flag.Int("top", 15, "modules and packages to list")
	flag.Parse()
	b, err := coldBuild(*pkg)
	if err != nil {
		log.Fatal(err)
	}
	report(*pkg, b, *top)
	result := fmt.Sprintf("RESULT cpu_s=%.1f actions=%d packages=%d wall_s=%.1f", b.cpu.Seconds(), b.actions, b.packages, b.wall.Seconds())
	if *ref != "" {
		r, err := coldBuild(*ref)
		if err != nil {
			log.Fatal(err)
		}
		report(*ref, r, 5)
		result += fmt.Sprintf(" ref_cpu_s=%.1f ref_packages=%d", r.cpu.Seconds(), r.packages)
	}
	fmt.Println(result)
}

// coldBuild builds pkg with an empty build cache and reads its action graph.
func coldBuild(pkg string) (*build, error) {
	dir, err := os.MkdirTemp("", "svc-coldbuild-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	graph := filepath.Join(dir, "actiongraph.json")
	cmd := exec.Command("go", "build", "-debug-actiongraph="+graph, "-o", filepath.Join(dir, "out"), pkg)
	// The caller's environment (GOFLAGS, GOPROXY, …) with the empty cache: a later GOCACHE wins.
	cmd.Env = testservice.ChildEnv("GOCACHE=" + filepath.Join(dir, "cache"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build %s: %w", pkg, err)
	}
	b := &build{wall: time.Since(start), byModule: map[string]time.Duration{}, byPkg: map[string]time.Duration{}}
	raw, err := os.ReadFile(graph)
	if err != nil {
		return nil, err
	}
	var actions []action
	if err := json.Unmarshal(raw, &actions); err != nil {
		return nil, fmt.Errorf("%s: %w", graph, err)
	}
	for _, a := range actions {
		cpu := time.Duration(a.CmdUser + a.CmdSys)
		if cpu == 0 {
			continue
		}
		b.cpu += cpu
		b.actions++
		if a.Mode == "build" {
			b.packages++
		}
		name := a.Package
		if a.Mode == "link" {
			name = "link " + a.Package
		}
		b.byPkg[name] += cpu
		b.byModule[module(a)] += cpu
	}
	return b, nil
}

// module names the module an action's package belongs to, closely enough to group by: the
// standard library, the linker, or the import path cut to its repository.
func module(a action) string {
	if a.Mode == "link" {
		return "(link)"
	}
	first, _, _ := strings.Cut(a.Package, "/")
	if !strings.Contains(first, ".") {
		return "(standard library)"
	}
	parts := strings.Split(a.Package, "/")
	n := 2 // modernc.org/sqlite, google.golang.org/grpc
	switch first {
	case "github.com", "golang.org", "gitlab.com", "go.opentelemetry.io":
		n = 3 // github.com/owner/repo, golang.org/x/text, go.opentelemetry.io/otel/sdk
	}
	return strings.Join(parts[:min(n, len(parts))], "/")
}

func report(pkg string, b *build, top int) {
	fmt.Printf("cold build of %s: %.1f s CPU in %d tool runs (%d packages compiled), %.1f s wall\n",
		pkg, b.cpu.Seconds(), b.actions, b.packages, b.wall.Seconds())
	for _, g := range []struct {
		what string
		m    map[string]time.Duration
	}{{"module", b.byModule}, {"package", b.byPkg}} {
		fmt.Printf("  CPU by %s:\n", g.what)
		keys := slices.SortedFunc(maps.Keys(g.m), func(x, y string) int { return cmp.Compare(g.m[y], g.m[x]) })
		for _, k := range keys[:min(top, len(keys))] {
			fmt.Printf("    %7.1f s %5.1f %%  %s\n", g.m[k].Seconds(), 100*g.m[k].Seconds()/b.cpu.Seconds(), k)
		}
	}
}

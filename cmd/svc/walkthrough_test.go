package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/svctest"
)

// TestIntegrationWalkthrough runs the shell blocks of docs/integration.md's walkthrough, as
// they are written, against the ready binary built from this package (only the port is
// changed, so parallel test runs do not collide), and checks every "# →" line of the blocks
// against their output.
func TestIntegrationWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the walkthrough needs %s on PATH (scripts/test.sh runs under bash; curl is in every Debian image the suite supports)", tool)
		}
	}
	doc, err := os.ReadFile("../../docs/integration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Walkthrough")
	if !ok {
		t.Fatal("docs/integration.md has no walkthrough section")
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) < 5 {
		t.Fatalf("walkthrough has %d shell blocks", len(blocks))
	}
	var script strings.Builder
	var want []string
	for _, b := range blocks {
		script.WriteString(b[1])
		for _, line := range strings.Split(b[1], "\n") {
			if exp, ok := strings.CutPrefix(line, "# → "); ok {
				want = append(want, exp)
			}
		}
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, "svc"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(filepath.Join(work, "configs"), 0o755); err != nil {
		t.Fatal(err)
	}
	shipped, err := os.ReadFile("../../configs/application.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "configs", "application.toml"), shipped, 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	text := "set -eu\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" +
		strings.ReplaceAll(script.String(), "localhost:8080", "localhost:"+port)
	sh := exec.CommandContext(ctx, "bash", "-c", text)
	sh.Dir = work
	sh.Env = svctest.ChildEnv("PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "SVC_APP_PORT="+port)
	var out bytes.Buffer
	sh.Stdout, sh.Stderr = &out, &out
	if err := sh.Run(); err != nil {
		log, _ := os.ReadFile(filepath.Join(work, "svc.log"))
		t.Fatalf("walkthrough failed: %v\n%s\nserver log:\n%s", err, out.String(), log)
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q", w)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out.String())
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

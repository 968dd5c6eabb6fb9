package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestChildEnvironment: a child the harness starts (a node, a server, the CLI) sees none of the
// caller's SVC_* configuration, only what the harness sets, so a shell with SVC_APP_PORT
// exported cannot move a node off the port its configuration file names.
func TestChildEnvironment(t *testing.T) {
	t.Setenv("SVC_APP_PORT", "9999")
	t.Setenv("SVC_SECURITY_SECRET", "from-the-caller")
	t.Setenv("SVC_TEST_FAULTS_PROBE", "kept")
	dir := t.TempDir()
	p := &proc{name: "env", args: []string{"env"}, env: []string{"SVC_LOG_LEVEL=warn"}, log: filepath.Join(dir, "env.log")}
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	<-p.done
	b, err := os.ReadFile(p.log)
	if err != nil {
		t.Fatal(err)
	}
	// The SVC_TEST_* service addresses stay (svctest.ChildEnv's rule); no configuration key does.
	var svc []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "SVC_") && (!strings.HasPrefix(line, "SVC_TEST_") || strings.HasPrefix(line, "SVC_TEST_FAULTS_PROBE=")) {
			svc = append(svc, line)
		}
	}
	slices.Sort(svc)
	want := []string{"SVC_LOG_LEVEL=warn", "SVC_TEST_FAULTS_PROBE=kept"}
	if !slices.Equal(svc, want) {
		t.Errorf("child's SVC_* environment = %q, want %q", svc, want)
	}
	if !strings.Contains(string(b), "PATH=") {
		t.Errorf("child's environment lacks PATH:\n%s", b)
	}

	out, err := command([]string{"SVC_LOG_LEVEL=warn"}, "env").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "SVC_APP_PORT") || strings.Contains(string(out), "SVC_SECURITY_SECRET") {
		t.Errorf("command's child saw the caller's configuration:\n%s", out)
	}
}

// TestLogTail: a node that never became ready is reported with the end of its log.
func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node0.log")
	if err := os.WriteFile(path, []byte("a\nb\nc\nlisten tcp :9999: bind: address already in use\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := logTail(path, 2), "c\nlisten tcp :9999: bind: address already in use"; got != want {
		t.Errorf("logTail = %q, want %q", got, want)
	}
	if got, want := logTail(path, 10), "a\nb\nc\nlisten tcp :9999: bind: address already in use"; got != want {
		t.Errorf("logTail(10) = %q, want %q", got, want)
	}
	if got := logTail(filepath.Join(t.TempDir(), "missing.log"), 2); !strings.Contains(got, "no such file") {
		t.Errorf("logTail of a missing file = %q, want the read error", got)
	}
}

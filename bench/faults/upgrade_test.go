package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The clock overlay shifts the wall-clock reading of time.Now once, and adds the file that
// reads the offset; the monotonic reading is left alone.
func TestClockOverlay(t *testing.T) {
	o := overlay{Replace: map[string]string{}}
	dir := t.TempDir()
	if err := clockOverlay(o, dir); err != nil {
		t.Fatal(err)
	}
	if len(o.Replace) != 2 {
		t.Fatalf("overlay replaces %d files, want time.go and faults_skew.go: %v", len(o.Replace), o.Replace)
	}
	for target, path := range o.Replace {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Base(target) {
		case "time.go":
			if n := strings.Count(string(b), "sec, nsec = faultsWall(sec, nsec)"); n != 1 {
				t.Errorf("time.go shifts the wall clock %d times, want 1", n)
			}
		case "faults_skew.go":
			if !strings.Contains(string(b), `syscall.Getenv("`+skewVar+`")`) {
				t.Errorf("faults_skew.go does not read %s:\n%s", skewVar, b)
			}
		default:
			t.Errorf("unexpected overlay target %s", target)
		}
	}
}

// The upgrade's migration comes after every migration of approval's dialect directories.
func TestNextMigration(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, dialect := range []string{"postgres", "mysql"} {
		dir := filepath.Join(root, "approval", "migrations", dialect)
		v, err := nextMigration(dir)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), fmt.Sprintf("%03d_", v)) {
				t.Errorf("%s: version %d is taken by %s", dialect, v, e.Name())
			}
		}
		if v < 2 {
			t.Errorf("%s: next version %d, want after the existing ones", dialect, v)
		}
	}
}

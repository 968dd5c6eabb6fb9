package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Builds of the run (issue #45 item 5): with -skew, every node runs svc built from the tree with
// a go build overlay over the standard library's time.Now, which shifts the wall clock by the
// offset named by the environment variable skewVar (unset: time.Now itself), so one node runs
// with its clock skewed; the rolling upgrade restarts the nodes onto a second build that also
// holds one more approval migration. A mutant (bench/faults/mutants/run.sh) adds its broken
// file to both builds (-overlay).

// skewVar is the environment variable the overlaid time.Now reads once at start: a Go duration
// added to the wall clock of every reading, not to its monotonic clock (as a skewed system
// clock: CLOCK_REALTIME off, CLOCK_MONOTONIC not). Not SVC_*: svc reads those as configuration.
const skewVar = "FAULTS_CLOCK_SKEW"

// skewSource is the file the overlay adds to package time.
const skewSource = `package time

import "syscall"

// faultsSkew is the offset of this process's wall clock (bench/faults).
var faultsSkew = func() int64 {
	v, _ := syscall.Getenv("` + skewVar + `")
	d, _ := ParseDuration(v)
	return int64(d)
}()

// faultsWall shifts a wall-clock reading by faultsSkew.
func faultsWall(sec int64, nsec int32) (int64, int32) {
	if faultsSkew == 0 {
		return sec, nsec
	}
	n := sec*1e9 + int64(nsec) + faultsSkew
	return n / 1e9, int32(n % 1e9)
}
`

// upgradeColumn is what the upgrade's migration adds: a nullable column of apv_instance, the
// table the approval load writes on every node, so the old nodes keep writing it while the new
// ones run (an additive migration, as a rolling upgrade needs).
const upgradeColumn = "faults_upgrade"

// builds are the run's two svc binaries and the migration the second adds.
type builds struct {
	svc, upgraded string
	// module and version of the upgrade's migration.
	module  string
	version int
}

// overlay is the Replace map of a go build -overlay file.
type overlay struct {
	Replace map[string]string
}

// buildAll builds svc (with extra, the caller's overlay file or "", and with the clock overlay
// when clock is set) and, when upgrade is set, the upgraded svc with the migration added. The
// overlaid files live in .cache/faults-overlay of the tree, the same path and bytes every run,
// so Go's build cache serves later runs (the clock overlay recompiles everything that imports
// time, once: about 18 minutes on the shared 2-core machine).
func buildAll(root, dir, dialect, extra string, clock, upgrade bool) (*builds, error) {
	odir := filepath.Join(root, ".cache", "faults-overlay")
	if err := os.MkdirAll(odir, 0o755); err != nil {
		return nil, err
	}
	base := overlay{Replace: map[string]string{}}
	if extra != "" {
		raw, err := os.ReadFile(extra)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &base); err != nil {
			return nil, fmt.Errorf("overlay %s: %w", extra, err)
		}
	}
	if clock {
		if err := clockOverlay(base, odir); err != nil {
			return nil, err
		}
	}
	b := &builds{svc: filepath.Join(dir, "svc")}
	if err := goBuild(root, dir, "base", base, b.svc); err != nil {
		return nil, err
	}
	if !upgrade {
		return b, nil
	}
	b.module = "approval"
	mdir := filepath.Join(root, "approval", "migrations", dialect)
	var err error
	if b.version, err = nextMigration(mdir); err != nil {
		return nil, err
	}
	up := overlay{Replace: maps.Clone(base.Replace)}
	sql := fmt.Sprintf("ALTER TABLE apv_instance ADD COLUMN %s VARCHAR(32) NULL;\n", upgradeColumn)
	if err := writeOverlay(up, odir, filepath.Join(mdir, fmt.Sprintf("%03d_faults_upgrade.sql", b.version)), dialect+"-upgrade.sql", sql); err != nil {
		return nil, err
	}
	b.upgraded = filepath.Join(dir, "svc-upgraded")
	return b, goBuild(root, dir, "upgraded", up, b.upgraded)
}

// clockOverlay adds to o the standard library's time package with the wall clock shifted by
// skewVar, its files written to odir.
func clockOverlay(o overlay, odir string) error {
	goroot, err := command(nil, "go", "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %w", err)
	}
	timeDir := filepath.Join(strings.TrimSpace(string(goroot)), "src", "time")
	src, err := os.ReadFile(filepath.Join(timeDir, "time.go"))
	if err != nil {
		return err
	}
	const now = "\nfunc Now() Time {\n\tsec, nsec, mono := runtimeNow()\n"
	if strings.Count(string(src), now) != 1 {
		return fmt.Errorf("%s: no single %q to wrap", filepath.Join(timeDir, "time.go"), strings.TrimSpace(now))
	}
	wrapped := strings.Replace(string(src), now, now+"\tsec, nsec = faultsWall(sec, nsec)\n", 1)
	if err := writeOverlay(o, odir, filepath.Join(timeDir, "time.go"), "time.go", wrapped); err != nil {
		return err
	}
	return writeOverlay(o, odir, filepath.Join(timeDir, "faults_skew.go"), "faults_skew.go", skewSource)
}

// writeOverlay writes content to name in dir (unless it holds it already: a concurrent run
// may be compiling it; else through a renamed temporary file) and maps target onto it in o.
func writeOverlay(o overlay, dir, target, name, content string) error {
	path := filepath.Join(dir, name)
	o.Replace[target] = path
	if old, err := os.ReadFile(path); err == nil && string(old) == content {
		return nil
	}
	tmp, err := os.CreateTemp(dir, name+".*")
	if err != nil {
		return err
	}
	_, err = tmp.WriteString(content)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// goBuild builds ./cmd/svc with overlay o into out.
func goBuild(root, dir, name string, o overlay, out string) error {
	raw, err := json.Marshal(o)
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "overlay-"+name+".json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		return err
	}
	build := command(nil, "go", "build", "-overlay", file, "-o", out, "./cmd/svc")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/svc (%s): %w", name, err)
	}
	return nil
}

var migrationPrefix = regexp.MustCompile(`^([0-9]{3,})_`)

// nextMigration is the version after the highest migration file in dir.
func nextMigration(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	high := 0
	for _, e := range entries {
		if m := migrationPrefix.FindStringSubmatch(e.Name()); m != nil {
			v, _ := strconv.Atoi(m[1])
			high = max(high, v)
		}
	}
	if high == 0 {
		return 0, fmt.Errorf("no migration in %s", dir)
	}
	return high + 1, nil
}

// rollingUpgrade restarts the nodes one by one onto the upgraded build while the load runs:
// each gets SIGTERM (a graceful stop, killed after 15 s), starts on the new binary, and must be
// serving (every node ready) before the next one stops. Each node's restart is a fault of kind
// "upgrade" aimed at it: its window (stop … every node ready again) excuses its failures only.
func (h *harness) rollingUpgrade() {
	h.log("rolling upgrade onto %s (migration %s %03d)", filepath.Base(h.builds.upgraded), h.builds.module, h.builds.version)
	for _, n := range h.c.nodes {
		f := &fault{kind: "upgrade", node: n.id, target: n.proc.name, deadline: recoveryDeadline("upgrade"), start: time.Now()}
		h.rec.addFault(f)
		n.proc.stop(15 * time.Second)
		n.proc.args[0] = h.builds.upgraded
		if err := n.proc.start(); err != nil {
			f.note = err.Error()
		}
		h.c.client.CloseIdleConnections()
		h.rec.mu.Lock()
		f.healed = time.Now()
		f.settled = f.healed
		h.rec.mu.Unlock()
		err := h.recover([]*fault{f})
		h.rec.mu.Lock()
		if err == nil {
			f.recovered = time.Now()
		} else {
			f.note += fmt.Sprintf("not recovered: %v", err)
		}
		h.rec.mu.Unlock()
		if err != nil {
			h.log("upgrade %s: not serving within %s: %v", n.proc.name, recoveryBound, err)
			return
		}
		h.log("upgrade %-8s %5.1fs, ready again after %.1fs", n.proc.name, f.healed.Sub(f.start).Seconds(), f.recovery().Seconds())
	}
	h.rec.mu.Lock()
	h.upgraded = true
	h.rec.mu.Unlock()
}

// checkUpgrade verifies the rolling upgrade: every node runs the upgraded build, its migration
// is recorded exactly once and its column exists, and the approval load kept writing through it
// (instances started after the upgrade began are checked like every other by the approval
// checks; here, that there are some).
func (h *harness) checkUpgrade(ctx context.Context) error {
	if h.builds.upgraded == "" {
		return nil
	}
	c := newCheck("upgrade.migration_applied_once", 4)
	h.rec.mu.Lock()
	done := h.upgraded
	var began time.Time
	for _, f := range h.rec.faults {
		if f.kind == "upgrade" && began.IsZero() {
			began = f.start
		}
	}
	h.rec.mu.Unlock()
	if !done {
		c.fail("the rolling upgrade did not finish (the run was too short or a node never came back)")
	}
	for _, n := range h.c.nodes {
		c.checked++
		if n.proc.args[0] != h.builds.upgraded {
			c.fail("%s still runs the old build", n.proc.name)
		}
	}
	var rows int
	if err := h.db.QueryRowContext(ctx, h.c.db.q("SELECT COUNT(*) FROM svc_schema_migrations WHERE module = ? AND version = ?"), h.builds.module, h.builds.version).Scan(&rows); err != nil {
		return err
	}
	c.checked++
	if done && rows != 1 {
		c.fail("migration %s %03d recorded %d times", h.builds.module, h.builds.version, rows)
	}
	var after, marked int
	if !began.IsZero() {
		// The column exists (the query fails otherwise) and old and new nodes wrote instances
		// around it.
		err := h.db.QueryRowContext(ctx, h.c.db.q("SELECT COUNT(*), COUNT("+upgradeColumn+") FROM apv_instance WHERE created_at > ?"), began.UTC()).Scan(&after, &marked)
		if err != nil {
			c.fail("reading apv_instance.%s after the upgrade: %v", upgradeColumn, err)
		}
	}
	c.checked++
	if done && (after == 0 || marked != 0) {
		c.fail("%d instances started after the upgrade began (want some), %d with the new column set (want none)", after, marked)
	}
	h.rec.addCheck(*c)
	h.log("upgrade: migration %s %03d recorded %d time(s); %d instances started since the upgrade began", h.builds.module, h.builds.version, rows, after)
	return nil
}

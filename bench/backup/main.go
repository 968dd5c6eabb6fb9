// Command backup benchmarks the backup module (issue #47) on the shipped binary: `svc serve`
// built from ./cmd/svc over a SQLite database of -db MiB and -files MiB of uploaded files on one
// disk, backups started the way a user starts them from the console (`sys/backup create` on
// /api, then `get` until the row is finished). The data is filled through the library against
// the data directory before the binary starts (random blobs in a table, files stored through
// the filesystem backend with their registry rows, a user with the admin role).
//
// Method (changed on 2026-12-07; docs/performance.md "Backups (issue #47)" says why):
//
//   - Speed: `cp -r` of the data directory and an unloaded backup to a folder on the same disk
//     alternate -runs times in one process (a `sync` after each, untimed, so neither inherits
//     the other's dirty pages); the medians are compared (target: backup ≥ 50 % of cp's
//     throughput). cp followed by a timed `sync` is printed beside it: the backup ends with an
//     fsync of its archive, so that is the like-for-like durable copy. Both run with nothing
//     else on the server, as cp does. The backup's time is its row's finishedAt − startedAt;
//     the server logs its phases ("backup succeeded": snapshot, refs, database, files, finish,
//     sync), printed here.
//
//   - /api p99: an open-loop load at a fixed -rate of an authenticated read (`sys/backup
//     find_page`, one page of the backup rows), latency counted from each request's scheduled
//     send time so a stall is not hidden by the client waiting; -window without a backup, then
//     for the whole of one backup (target: p99 during ≤ 2× without). A closed loop (-clients
//     callers back to back) saturates the 2 cores, where any background work raises latency by
//     its CPU share; its figures are printed as information only, with the backup's time under
//     each load.
//
// Run it as:
//
//	go run ./bench/backup -db 1024 -files 4096 -rate 400
//
// It prints one RESULT line with the figures. See bench/backup/run.sh and docs/performance.md
// for the recorded numbers.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/internal/testservice"
)

type options struct {
	dbMiB, filesMiB, fileMiB int64
	dir, bin                 string
	rate                     int
	window                   time.Duration
	clients, runs            int
	keep                     bool
}

func main() {
	var o options
	flag.Int64Var(&o.dbMiB, "db", 1024, "database size in MiB")
	flag.Int64Var(&o.filesMiB, "files", 4096, "uploaded files in MiB")
	flag.Int64Var(&o.fileMiB, "file-size", 16, "size of one file in MiB")
	flag.StringVar(&o.dir, "dir", "", "working directory on the disk to measure (default: a new temp dir)")
	flag.StringVar(&o.bin, "bin", "", "svc binary, run as `bin serve -c <config>` (default: built from ./cmd/svc)")
	flag.IntVar(&o.rate, "rate", 400, "open-loop /api requests per second during the p99 measurements")
	flag.DurationVar(&o.window, "window", 10*time.Second, "length of the loads without a backup")
	flag.IntVar(&o.clients, "clients", 4, "closed-loop /api clients (information only)")
	flag.IntVar(&o.runs, "runs", 3, "alternating cp and unloaded-backup runs (the medians are compared)")
	flag.BoolVar(&o.keep, "keep", false, "keep -dir and its data; a -dir filled by an earlier -keep run is used as it is (compare binaries on one data set)")
	flag.Parse()
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

func run(o options) error {
	filled := false
	if o.dir == "" {
		d, err := os.MkdirTemp("", "svc-backup-bench-")
		if err != nil {
			return err
		}
		o.dir = d
		defer os.RemoveAll(o.dir)
	} else if o.keep {
		_, err := os.Stat(filepath.Join(o.dir, "application.toml"))
		filled = err == nil
	} else {
		defer os.RemoveAll(o.dir)
	}
	if o.bin == "" {
		o.bin = filepath.Join(o.dir, "svc")
		if out, err := exec.Command("go", "build", "-o", o.bin, "./cmd/svc").CombinedOutput(); err != nil {
			return fmt.Errorf("build svc: %v\n%s", err, out)
		}
	}
	cfgPath := filepath.Join(o.dir, "application.toml")
	if !filled {
		if err := os.MkdirAll(o.dir, 0o750); err != nil {
			return err
		}
		if err := writeConfig(cfgPath); err != nil {
			return err
		}
		if err := fill(cfgPath, o); err != nil {
			return fmt.Errorf("fill: %w", err)
		}
	}
	srv, err := startServer(o.bin, cfgPath, filepath.Join(o.dir, "server.log"))
	if err != nil {
		return err
	}
	defer srv.stop()
	if err := srv.login(); err != nil {
		return err
	}
	return measureAll(o, srv)
}

// measureAll runs the alternating speed runs, then the open- and closed-loop p99 runs.
func measureAll(o options, srv *server) error {
	var cps, cpSyncs, bks []time.Duration
	var last backupRun
	for range o.runs {
		cp, cpSync, err := timeCp(filepath.Join(o.dir, "data"), filepath.Join(o.dir, "cp"))
		if err != nil {
			return err
		}
		cps, cpSyncs = append(cps, cp), append(cpSyncs, cpSync)
		b, err := srv.backup()
		if err != nil {
			return err
		}
		bks = append(bks, b.took)
		last = b
		fmt.Printf("run: cp %v (with sync %v), backup %v  phases %s\n", cp.Round(time.Millisecond), cpSync.Round(time.Millisecond),
			b.took.Round(time.Millisecond), b.phases)
	}
	total := float64(o.dbMiB + o.filesMiB)
	cp, bk := median(cps), median(bks)
	fmt.Printf("data: %d MiB database + %d MiB files (%d files), archive %d MiB\n", o.dbMiB, o.filesMiB, last.row.FileCount, last.row.Size>>20)
	fmt.Printf("cp -r (median of %d):            %6.2f s  %7.1f MiB/s  runs %v\n", o.runs, cp.Seconds(), total/cp.Seconds(), rounded(cps))
	fmt.Printf("backup, unloaded (median of %d): %6.2f s  %7.1f MiB/s  runs %v  = %.0f %% of cp (target >= 50 %%)\n",
		o.runs, bk.Seconds(), total/bk.Seconds(), rounded(bks), 100*cp.Seconds()/bk.Seconds())
	cs := median(cpSyncs)
	fmt.Printf("cp -r + sync (median of %d):     %6.2f s  %7.1f MiB/s  runs %v; the backup = %.0f %% of it (both durable)\n",
		o.runs, cs.Seconds(), total/cs.Seconds(), rounded(cpSyncs), 100*cs.Seconds()/bk.Seconds())

	idle := srv.openLoop(o.rate, o.window, nil)
	var during backupRun
	var derr error
	loaded := srv.openLoop(o.rate, 0, func() { during, derr = srv.backup() })
	if derr != nil {
		return derr
	}
	fmt.Printf("open loop %d req/s, without a backup: p50 %v p99 %v (%d calls, %d failed)\n", o.rate, idle.p50, idle.p99, idle.n, idle.failed)
	fmt.Printf("open loop %d req/s, during a backup:  p50 %v p99 %v (%d calls, %d failed) = %.2f× (target <= 2×); backup %v, phases %s\n",
		o.rate, loaded.p50, loaded.p99, loaded.n, loaded.failed, ratio(loaded.p99, idle.p99), during.took.Round(time.Millisecond), during.phases)

	cIdle := srv.closedLoop(o.clients, o.window, nil)
	var cDuring backupRun
	cLoaded := srv.closedLoop(o.clients, 0, func() { cDuring, derr = srv.backup() })
	if derr != nil {
		return derr
	}
	fmt.Printf("information: closed loop %d clients, without: p99 %v (%d calls); during: p99 %v (%d calls) = %.2f×; backup %v (%.0f MiB/s)\n",
		o.clients, cIdle.p99, cIdle.n, cLoaded.p99, cLoaded.n, ratio(cLoaded.p99, cIdle.p99), cDuring.took.Round(time.Millisecond),
		total/cDuring.took.Seconds())
	fmt.Printf("RESULT cp_s=%.2f cp_sync_s=%.2f backup_s=%.2f backup_pct_of_cp=%.0f backup_pct_of_cp_sync=%.0f p99_idle_ms=%.2f p99_backup_ms=%.2f p99_ratio=%.2f rate=%d "+
		"closed_p99_ratio=%.2f backup_open_loop_s=%.2f backup_closed_loop_s=%.2f\n",
		cp.Seconds(), cs.Seconds(), bk.Seconds(), 100*cp.Seconds()/bk.Seconds(), 100*cs.Seconds()/bk.Seconds(), ms(idle.p99), ms(loaded.p99), ratio(loaded.p99, idle.p99), o.rate,
		ratio(cLoaded.p99, cIdle.p99), during.took.Seconds(), cDuring.took.Seconds())
	return nil
}

// writeConfig writes the server's configuration to path: SQLite and the filesystem storage
// under dir/data, backups in dir/backups, an admin role, rate limits out of the way.
func writeConfig(path string) error {
	dir := filepath.Dir(path)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	text := fmt.Sprintf(`[svc.app]
name = "bench"
port = %d
[svc.security]
secret = "%x"
login_rate_limit = 1000000
[svc.security.roles]
admin = ["*"]
[svc.api.rate_limit]
max = 1000000000
[svc.data_sources.primary]
type = "sqlite"
path = %q
[svc.storage]
provider = "filesystem"
auto_migrate = true
[svc.storage.filesystem]
root = %q
[svc.backup]
dir = %q
`, port, secret, filepath.Join(dir, "data", "svc.db"), filepath.Join(dir, "data", "storage"), filepath.Join(dir, "backups"))
	return os.WriteFile(path, []byte(text), 0o600)
}

func loadConfig(path string) (*config.Config, error) {
	cfg, _, err := config.Load(config.LoadOptions{Path: path, Env: testservice.NoEnv})
	return cfg, err
}

// fill starts the library's server on the data directory (no listener), grows the database
// with random blobs to dbMiB, stores filesMiB of files through the storage backend with their
// registry rows as completed uploads leave them, creates the user bench (admin), and stops.
func fill(cfgPath string, o options) error {
	ctx := context.Background()
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return err
	}
	srv, err := svc.New(cfg, svc.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return err
	}
	r, err := srv.Start(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop(context.Background()) }()
	d := r.DB()
	if _, err := d.ExecContext(ctx, "CREATE TABLE bench_filler (id INTEGER PRIMARY KEY, body BLOB NOT NULL)"); err != nil {
		return err
	}
	blob := make([]byte, 64<<10)
	for range o.dbMiB * 16 {
		_, _ = rand.Read(blob)
		if _, err := d.ExecContext(ctx, "INSERT INTO bench_filler (body) VALUES (?)", blob); err != nil {
			return err
		}
	}
	be := r.Storage().Backend()
	content := make([]byte, o.fileMiB<<20)
	for i := range o.filesMiB / o.fileMiB {
		_, _ = rand.Read(content)
		key := fmt.Sprintf("priv/2026/12/07/bench-%06d.bin", i)
		if _, err := be.Put(ctx, key, bytes.NewReader(content), int64(len(content)), "application/octet-stream"); err != nil {
			return err
		}
		if _, err := d.ExecContext(ctx, `INSERT INTO sys_storage_file (id, object_key, size, status, started_at, created_by)
VALUES (?, ?, ?, 'uploaded', '2026-12-07 00:00:00', 'bench')`, fmt.Sprintf("bench-%06d", i), key, len(content)); err != nil {
			return err
		}
	}
	_, err = r.Security().Store().Create(ctx, "bench", "bench", "bench-passphrase-1", []string{"admin"})
	return err
}

// timeCp times `cp -r src dst`, and cp followed by `sync` (a copy on disk, as durable as the
// backup's archive is when it succeeds: the backup ends with an fsync, cp does not); then it
// removes dst and syncs again (untimed).
func timeCp(src, dst string) (cp, cpSync time.Duration, err error) {
	start := time.Now()
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("cp: %v %s", err, out)
	}
	cp = time.Since(start)
	if err := exec.Command("sync").Run(); err != nil {
		return 0, 0, err
	}
	cpSync = time.Since(start)
	if err := os.RemoveAll(dst); err != nil {
		return 0, 0, err
	}
	return cp, cpSync, exec.Command("sync").Run()
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// server is the svc process under test.
type server struct {
	cmd     *exec.Cmd
	url     string
	token   string
	logPath string
	client  *http.Client
}

func startServer(bin, cfgPath, logPath string) (*server, error) {
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	s := &server{url: fmt.Sprintf("http://127.0.0.1:%d", cfg.App.Port), logPath: logPath,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}}}
	s.cmd = exec.Command(bin, "serve", "-c", cfgPath)
	s.cmd.Env = testservice.ChildEnv("SVC_LOG_LEVEL=info")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	if err := testservice.WaitReady(s.url, 2*time.Minute); err != nil {
		s.stop()
		return nil, fmt.Errorf("%w (log in %s)", err, logPath)
	}
	return s, nil
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	_ = s.cmd.Wait()
}

func (s *server) call(resource, action string, params, out any) error {
	body, _ := json.Marshal(map[string]any{"resource": resource, "action": action, "version": "v1", "params": params})
	req, _ := http.NewRequest(http.MethodPost, s.url+"/api", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Code != 0 {
		return fmt.Errorf("%s %s: %s", resource, action, raw)
	}
	if out != nil {
		return json.Unmarshal(env.Data, out)
	}
	return nil
}

func (s *server) login() error {
	var res struct {
		Tokens struct {
			AccessToken string `json:"accessToken"`
		} `json:"tokens"`
	}
	err := s.call("security/auth", "login", map[string]any{"type": "password", "principal": "bench", "credentials": "bench-passphrase-1"}, &res)
	s.token = res.Tokens.AccessToken
	return err
}

// backupRow is the part of a sys/backup row the bench reads.
type backupRow struct {
	ID               string `json:"id"`
	Status           string `json:"status"`
	Error            string `json:"error"`
	Size             int64  `json:"size"`
	FileCount        int64  `json:"fileCount"`
	StartedAtUnixMs  int64  `json:"startedAtUnixMs"`
	FinishedAtUnixMs int64  `json:"finishedAtUnixMs"`
}

type backupRun struct {
	row    backupRow
	took   time.Duration
	phases string
}

// backup starts a backup with sys/backup create, polls get every 20 ms until it finished,
// reads its phases from the server's log and deletes it (sys/backup delete).
func (s *server) backup() (backupRun, error) {
	var row backupRow
	if err := s.call("sys/backup", "create", map[string]any{}, &row); err != nil {
		return backupRun{}, err
	}
	for row.Status == "running" {
		time.Sleep(20 * time.Millisecond)
		if err := s.call("sys/backup", "get", map[string]any{"id": row.ID}, &row); err != nil {
			return backupRun{}, err
		}
	}
	if row.Status != "succeeded" {
		return backupRun{}, fmt.Errorf("backup %s: %s %s", row.ID, row.Status, row.Error)
	}
	r := backupRun{row: row, took: time.Duration(row.FinishedAtUnixMs-row.StartedAtUnixMs) * time.Millisecond}
	r.phases = s.phases(row.ID)
	return r, s.call("sys/backup", "delete", map[string]any{"id": row.ID}, nil)
}

// phases waits up to 2 s for the "backup succeeded" log line of id (the server's log is
// flushed every 100 ms) and formats its *_ms fields.
func (s *server) phases(id string) string {
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if p, ok := s.logLine(id); ok || time.Now().After(deadline) {
			return p
		}
	}
}

func (s *server) logLine(id string) (string, bool) {
	f, err := os.Open(s.logPath)
	if err != nil {
		return err.Error(), false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil || line["msg"] != "backup succeeded" || line["id"] != id {
			continue
		}
		var parts []string
		for _, k := range []string{"snapshot", "refs", "database", "files", "finish", "sync"} {
			if v, ok := line[k+"_ms"].(float64); ok {
				parts = append(parts, fmt.Sprintf("%s %.0f ms", k, v))
			}
		}
		return strings.Join(parts, ", "), true
	}
	return "(no log line)", false
}

type result struct {
	p50, p99  time.Duration
	n, failed int
}

func summarize(lat []time.Duration, failed int) result {
	if len(lat) == 0 {
		return result{failed: failed}
	}
	slices.Sort(lat)
	return result{p50: lat[len(lat)/2], p99: lat[len(lat)*99/100], n: len(lat), failed: failed}
}

// find is the measured call: an authenticated read of one page of the backup rows.
func (s *server) find() error {
	return s.call("sys/backup", "find_page", map[string]any{}, nil)
}

// openLoop sends rate requests per second on a fixed schedule, each on its own goroutine, for d
// or until during returns; a request's latency runs from its scheduled send time.
func (s *server) openLoop(rate int, d time.Duration, during func()) result {
	interval := time.Second / time.Duration(rate)
	var mu sync.Mutex
	var lat []time.Duration
	failed := 0
	var wg sync.WaitGroup
	done := make(chan struct{})
	go func() {
		if during != nil {
			during()
		} else {
			time.Sleep(d)
		}
		close(done)
	}()
	start := time.Now()
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * interval)
		select {
		case <-done:
			wg.Wait()
			return summarize(lat, failed)
		case <-time.After(time.Until(at)):
		}
		wg.Go(func() {
			err := s.find()
			el := time.Since(at)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				return
			}
			lat = append(lat, el)
		})
	}
}

// closedLoop runs clients callers back to back for d or until during returns.
func (s *server) closedLoop(clients int, d time.Duration, during func()) result {
	var stop atomic.Bool
	var mu sync.Mutex
	var lat []time.Duration
	failed := 0
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for !stop.Load() {
				t := time.Now()
				err := s.find()
				el := time.Since(t)
				mu.Lock()
				if err != nil {
					failed++
				} else {
					lat = append(lat, el)
				}
				mu.Unlock()
			}
		})
	}
	if during != nil {
		during()
	} else {
		time.Sleep(d)
	}
	stop.Store(true)
	wg.Wait()
	return summarize(lat, failed)
}

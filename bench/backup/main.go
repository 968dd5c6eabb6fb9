// Command backup benchmarks the backup module (issue #47) on the embedded default: a SQLite
// database of -db MiB and -files MiB of uploaded files on one disk. It times `cp` of the same
// database file and storage folder on the same disk, then a backup to a folder on that disk,
// and reports the backup's throughput as a share of cp's (the target is ≥ 50 %). While the
// backup runs, -clients goroutines call an authenticated /api operation over HTTP; the p99 of
// those calls is compared with the same load without a backup (the target is ≤ 2×).
//
//	go run ./bench/backup -db 1024 -files 4096 -dir /var/tmp/svc-backup-bench
//
// See bench/backup/run.sh and docs/performance.md for the recorded numbers.
package main

import (
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
	"sync"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/backup"
	"github.com/svc-framework/svc/config"
)

func main() {
	dbMiB := flag.Int64("db", 1024, "database size in MiB")
	filesMiB := flag.Int64("files", 4096, "uploaded files in MiB")
	fileMiB := flag.Int64("file-size", 16, "size of one file in MiB")
	clients := flag.Int("clients", 4, "concurrent /api clients during the p99 measurements")
	dir := flag.String("dir", "", "working directory on the disk to measure (default: a new temp dir)")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "svc-backup-bench-")
		if err != nil {
			log.Fatal(err)
		}
		*dir = d
	}
	defer os.RemoveAll(*dir)
	ctx := context.Background()
	cfg := config.Default()
	cfg.App.Port = 1
	cfg.Security.Secret = randomHex(32)
	cfg.Security.Roles = map[string][]string{"admin": {"*"}}
	cfg.Security.LoginRateLimit = 1 << 20
	cfg.API.RateLimit.Max = 1 << 30
	cfg.DataSources = map[string]config.DataSource{config.PrimaryDataSource: {Type: config.SQLite, Path: filepath.Join(*dir, "data", "svc.db")}}
	cfg.Storage.Provider = config.StorageFilesystem
	cfg.Storage.AutoMigrate = true
	cfg.Storage.Filesystem.Root = filepath.Join(*dir, "data", "storage")
	cfg.Backup.Dir = filepath.Join(*dir, "backups")
	srv, err := svc.New(cfg, svc.WithLogger(slog.New(slog.DiscardHandler)))
	check(err)
	running, err := srv.Start(ctx)
	check(err)
	defer func() { _ = srv.Stop(context.Background()) }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	hs := &http.Server{Handler: running.Handler()}
	go func() { _ = hs.Serve(ln) }()
	base := "http://" + ln.Addr().String()

	fill(ctx, running, *dbMiB, *filesMiB, *fileMiB)
	_, err = running.Security().Store().Create(ctx, "bench", "bench", "bench-passphrase-1", []string{"admin"})
	check(err)
	token := login(base)

	cpDir := filepath.Join(*dir, "cp")
	start := time.Now()
	out, err := exec.Command("cp", "-r", filepath.Join(*dir, "data"), cpDir).CombinedOutput()
	if err != nil {
		log.Fatalf("cp: %v %s", err, out)
	}
	cpTime := time.Since(start)
	_ = os.RemoveAll(cpDir)

	idle := measure(base, token, *clients, 10*time.Second, nil)
	var b *backup.Backup
	var took time.Duration
	during := measure(base, token, *clients, 0, func() {
		s := time.Now()
		b, err = running.Backup().Create(ctx, backup.Request{})
		took = time.Since(s)
	})
	check(err)
	total := float64(*dbMiB + *filesMiB)
	fmt.Printf("data: %d MiB database + %d MiB files (%d files)\n", *dbMiB, *filesMiB, b.FileCount)
	fmt.Printf("cp -r:   %6.1f s  %7.1f MiB/s\n", cpTime.Seconds(), total/cpTime.Seconds())
	fmt.Printf("backup:  %6.1f s  %7.1f MiB/s  = %.0f %% of cp (archive %d MiB)\n", took.Seconds(), total/took.Seconds(),
		100*cpTime.Seconds()/took.Seconds(), b.Size>>20)
	fmt.Printf("/api p99 without a backup: %v (%d calls); during the backup: %v (%d calls) = %.2f×\n",
		idle.p99, idle.n, during.p99, during.n, float64(during.p99)/float64(idle.p99))
}

// fill grows the database with random blobs to dbMiB and stores filesMiB of files through the
// storage backend with their registry rows, as completed uploads leave them.
func fill(ctx context.Context, r *svc.Running, dbMiB, filesMiB, fileMiB int64) {
	d := r.DB()
	_, err := d.ExecContext(ctx, "CREATE TABLE bench_filler (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
	check(err)
	blob := make([]byte, 64<<10)
	for i := int64(0); i < dbMiB*16; i++ {
		_, _ = rand.Read(blob)
		_, err := d.ExecContext(ctx, "INSERT INTO bench_filler (body) VALUES (?)", blob)
		check(err)
	}
	be := r.Storage().Backend()
	content := make([]byte, fileMiB<<20)
	for i := int64(0); i < filesMiB/fileMiB; i++ {
		_, _ = rand.Read(content)
		key := fmt.Sprintf("priv/2026/12/07/bench-%06d.bin", i)
		_, err := be.Put(ctx, key, bytes.NewReader(content), int64(len(content)), "application/octet-stream")
		check(err)
		_, err = d.ExecContext(ctx, `INSERT INTO sys_storage_file (id, object_key, size, status, started_at, created_by)
VALUES (?, ?, ?, 'uploaded', '2026-12-07 00:00:00', 'bench')`, fmt.Sprintf("bench-%06d", i), key, len(content))
		check(err)
	}
}

type result struct {
	p99 time.Duration
	n   int
}

// measure runs clients callers of sys/backup find_page for d, or until during returns.
func measure(base, token string, clients int, d time.Duration, during func()) result {
	stop := make(chan struct{})
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := time.Now()
				call(base, token, "sys/backup", "find_page", map[string]any{})
				el := time.Since(s)
				mu.Lock()
				lat = append(lat, el)
				mu.Unlock()
			}
		})
	}
	if during != nil {
		during()
	} else {
		time.Sleep(d)
	}
	close(stop)
	wg.Wait()
	slices.Sort(lat)
	return result{p99: lat[len(lat)*99/100], n: len(lat)}
}

func call(base, token, resource, action string, params any) json.RawMessage {
	body, _ := json.Marshal(map[string]any{"resource": resource, "action": action, "version": "v1", "params": params})
	req, _ := http.NewRequest(http.MethodPost, base+"/api", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	check(err)
	defer resp.Body.Close()
	var env struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &env); err != nil || env.Code != 0 {
		log.Fatalf("%s %s: %s", resource, action, raw)
	}
	return env.Data
}

func login(base string) string {
	data := call(base, "", "security/auth", "login", map[string]any{"type": "password", "principal": "bench", "credentials": "bench-passphrase-1"})
	var res struct {
		Tokens struct {
			AccessToken string `json:"accessToken"`
		} `json:"tokens"`
	}
	check(json.Unmarshal(data, &res))
	return res.Tokens.AccessToken
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

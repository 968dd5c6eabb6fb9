// Command upload benchmarks the storage module's upload path end to end, the way the original's
// React uploader drives it: init_upload, the server's part plan sent with N parts in flight
// (default 3, the client's default), complete_upload. The server is the real svc binary in its
// own process, so its memory can be read from /proc.
//
// For each run it times a raw `cp` of the same source file on the same disk, then the upload,
// and reports the upload's throughput as a share of cp's, and the server's peak RSS (VmHWM)
// against its idle RSS.
//
//	go run ./bench/upload -provider filesystem
//	go run ./bench/upload -provider objstore   # needs SVC_TEST_S3_* (scripts/services.sh)
//
// See bench/upload/run.sh and docs/modules/storage.md for the recorded numbers.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
)

type options struct {
	provider string
	size     int64
	parallel int
	runs     int
	dir      string
	bin      string
	verbose  bool
}

func main() {
	var o options
	var mib int64
	flag.StringVar(&o.provider, "provider", "filesystem", "storage provider: filesystem or objstore")
	flag.Int64Var(&mib, "size", 256, "upload size in MiB")
	flag.IntVar(&o.parallel, "parallel", 3, "parts in flight")
	flag.IntVar(&o.runs, "runs", 3, "measured runs (the median is reported)")
	flag.StringVar(&o.dir, "dir", "", "work directory on the disk under test (default: a new directory in .cache/bench)")
	flag.StringVar(&o.bin, "bin", "", "svc binary, run as `bin serve -c <config>` (default: built from ./cmd/svc)")
	flag.BoolVar(&o.verbose, "v", false, "print the time of the parts and of complete_upload for every upload")
	flag.Parse()
	o.size = mib << 20
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

func run(o options) error {
	if o.dir == "" {
		if err := os.MkdirAll(".cache/bench", 0o750); err != nil {
			return err
		}
		dir, err := os.MkdirTemp(".cache/bench", "upload-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.dir = dir
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	if o.bin == "" {
		o.bin = filepath.Join(dir, "svc")
		if out, err := exec.Command("go", "build", "-o", o.bin, "./cmd/svc").CombinedOutput(); err != nil {
			return fmt.Errorf("build svc: %v\n%s", err, out)
		}
	}
	src := filepath.Join(dir, "source.bin")
	if err := writeRandom(src, o.size); err != nil {
		return err
	}
	srv, err := startServer(o, dir)
	if err != nil {
		return err
	}
	defer srv.stop()
	if _, err := srv.upload(src, 1, 1); err != nil { // warm-up: every code path loaded once; learns the part size
		return fmt.Errorf("warm-up: %w", err)
	}
	idle, err := srv.memory("VmRSS")
	if err != nil {
		return err
	}
	var cps, ups, directs []time.Duration
	for range o.runs {
		d, err := timeCopy(src, filepath.Join(dir, "copy.bin"))
		if err != nil {
			return err
		}
		cps = append(cps, d)
		if o.provider == "objstore" {
			d, err := s3Direct(src, o.size, srv.partSize, o.parallel)
			if err != nil {
				return err
			}
			directs = append(directs, d)
		}
		u, err := srv.upload(src, o.size, o.parallel)
		if err != nil {
			return err
		}
		ups = append(ups, u)
		if err := srv.cleanup(); err != nil {
			return err
		}
	}
	peak, err := srv.memory("VmHWM")
	if err != nil {
		return err
	}
	report(o, srv.partSize, cps, ups, idle, peak)
	if len(directs) > 0 {
		d, up := median(directs), median(ups)
		fmt.Printf("S3 direct       %v  (%.0f MiB/s)   runs %v  (minio-go straight to the S3 server, same plan)\n",
			d.Round(time.Millisecond), float64(o.size)/(1<<20)/d.Seconds(), rounded(directs))
		fmt.Printf("upload / direct %.0f %% of the S3 server's own ceiling\n", 100*d.Seconds()/up.Seconds())
	}
	return nil
}

// writeRandom writes size random bytes to path, in 1 MiB blocks.
func writeRandom(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(buf)) {
		_, _ = rand.Read(buf)
		if _, err := f.Write(buf[:min(left, int64(len(buf)))]); err != nil {
			return err
		}
	}
	return f.Close()
}

// timeCopy times `cp src dst` and removes dst.
func timeCopy(src, dst string) (time.Duration, error) {
	start := time.Now()
	if out, err := exec.Command("cp", src, dst).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("cp: %v %s", err, out)
	}
	d := time.Since(start)
	return d, os.Remove(dst)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func report(o options, partSize int64, cps, ups []time.Duration, idle, peak int64) {
	mb := float64(o.size) / (1 << 20)
	cp, up := median(cps), median(ups)
	fmt.Printf("provider        %s\n", o.provider)
	fmt.Printf("object          %d MiB, part size %d MiB (%d parts), %d in flight\n", o.size>>20, partSize>>20, (o.size+partSize-1)/partSize, o.parallel)
	fmt.Printf("cp              %v  (%.0f MiB/s)   runs %v\n", cp.Round(time.Millisecond), mb/cp.Seconds(), rounded(cps))
	fmt.Printf("upload          %v  (%.0f MiB/s)   runs %v\n", up.Round(time.Millisecond), mb/up.Seconds(), rounded(ups))
	fmt.Printf("upload / cp     %.0f %% of cp throughput (target >= 40 %%)\n", 100*cp.Seconds()/up.Seconds())
	fmt.Printf("server RSS      idle %.1f MiB, peak %.1f MiB, peak - idle %.1f MiB (target <= 64 MiB)\n",
		float64(idle)/1024, float64(peak)/1024, float64(peak-idle)/1024)
}

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

// server is the svc process under test.
type server struct {
	cmd      *exec.Cmd
	url      string
	token    string
	root     string
	partSize int64
	logs     bytes.Buffer
	client   *http.Client
	verbose  bool
	bucket   string // objstore only
}

func startServer(o options, dir string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	root := filepath.Join(dir, "files")
	bucket := ""
	secret, err := randomSecret()
	if err != nil {
		return nil, err
	}
	cfgText := fmt.Sprintf("[svc.app]\nname = \"bench\"\nport = %d\n[svc.security]\nsecret = %q\n"+
		"[svc.data_sources.primary]\ntype = \"sqlite\"\npath = %q\n"+
		"[svc.storage]\nprovider = %q\nauto_migrate = true\nupload_part_rate_limit = 100000\n[svc.storage.filesystem]\nroot = %q\n",
		port, secret, filepath.Join(dir, "svc.db"), o.provider, root)
	if o.provider == "objstore" {
		for _, k := range []string{"SVC_TEST_S3_ENDPOINT", "SVC_TEST_S3_ACCESS_KEY", "SVC_TEST_S3_SECRET_KEY"} {
			if os.Getenv(k) == "" {
				return nil, fmt.Errorf("%s is not set (run eval \"$(scripts/services.sh)\")", k)
			}
		}
		bucket = fmt.Sprintf("bench-%d", time.Now().UnixNano())
		cfgText += fmt.Sprintf("[svc.storage.objstore]\nendpoint = %q\naccess_key = %q\nsecret_key = %q\nbucket = %q\nregion = \"us-east-1\"\n",
			os.Getenv("SVC_TEST_S3_ENDPOINT"), os.Getenv("SVC_TEST_S3_ACCESS_KEY"), os.Getenv("SVC_TEST_S3_SECRET_KEY"), bucket)
	}
	cfgPath := filepath.Join(dir, "application.toml")
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
		return nil, err
	}
	cfg, _, err := config.Load(config.LoadOptions{Path: cfgPath, Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		return nil, err
	}
	tok, err := security.MintAccessToken(cfg, &rpc.Principal{Type: rpc.PrincipalUser, ID: "bench", Name: "bench", Roles: []string{}}, time.Now())
	if err != nil {
		return nil, err
	}
	s := &server{url: fmt.Sprintf("http://127.0.0.1:%d", port), token: tok, root: root, bucket: bucket, verbose: o.verbose,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, WriteBufferSize: 256 << 10}}}
	s.cmd = exec.Command(o.bin, "serve", "-c", cfgPath)
	s.cmd.Env = testservice.ChildEnv("SVC_LOG_LEVEL=warn")
	s.cmd.Stdout, s.cmd.Stderr = &s.logs, &s.logs
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	if err := testservice.WaitReady(s.url, time.Minute); err != nil {
		s.stop()
		return nil, fmt.Errorf("%w\n%s", err, s.logs.String())
	}
	return s, nil
}

// stop shuts the server down and removes the objstore bucket it used.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	_ = s.cmd.Wait()
	if s.bucket != "" {
		if c, err := s3Client(); err == nil {
			removeBucket(c, s.bucket)
		}
	}
}

// memory reads a field of /proc/<pid>/status in KiB.
func (s *server) memory(field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc status", field)
}

// cleanup removes the uploaded objects of the filesystem provider, so every run starts alike.
func (s *server) cleanup() error {
	for _, d := range []string{"priv"} {
		if err := os.RemoveAll(filepath.Join(s.root, d)); err != nil {
			return err
		}
	}
	return nil
}

type envelope struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (s *server) do(req *http.Request) (envelope, error) {
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(req)
	if err != nil {
		return envelope{}, err
	}
	defer resp.Body.Close()
	var env envelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return env, err
	}
	if env.Code != 0 {
		return env, fmt.Errorf("code %d: %s", env.Code, env.Message)
	}
	return env, nil
}

func (s *server) call(action string, params any, out any) error {
	body, _ := json.Marshal(map[string]any{"resource": "sys/storage", "action": action, "version": "v1", "params": params})
	req, _ := http.NewRequest(http.MethodPost, s.url+"/api", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	env, err := s.do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", action, err)
	}
	if out != nil {
		return json.Unmarshal(env.Data, out)
	}
	return nil
}

// upload sends size bytes of src with parallel parts in flight and returns the wall time from
// init_upload to the end of complete_upload.
func (s *server) upload(src string, size int64, parallel int) (time.Duration, error) {
	f, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	start := time.Now()
	var plan struct {
		ClaimID   string `json:"claimId"`
		PartSize  int64  `json:"partSize"`
		PartCount int    `json:"partCount"`
	}
	if err := s.call("init_upload", map[string]any{"filename": "bench.bin", "size": size}, &plan); err != nil {
		return 0, err
	}
	s.partSize = plan.PartSize
	next := make(chan int)
	errs := make(chan error, parallel)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for n := range next {
				off := int64(n-1) * plan.PartSize
				if err := s.part(plan.ClaimID, n, io.NewSectionReader(f, off, min(plan.PartSize, size-off))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	go func() {
		defer close(next)
		for n := 1; n <= plan.PartCount; n++ {
			select {
			case next <- n:
			case err := <-errs:
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	parts := time.Since(start)
	if err := s.call("complete_upload", map[string]any{"claimId": plan.ClaimID}, nil); err != nil {
		return 0, err
	}
	if s.verbose {
		fmt.Fprintf(os.Stderr, "  parts %v, complete_upload %v\n", parts.Round(time.Millisecond), (time.Since(start) - parts).Round(time.Millisecond))
	}
	return time.Since(start), nil
}

// part sends one part in a multipart envelope (fields first, then the file) with its
// Content-Length, as a browser's FormData does, streaming the file section without copying it
// into the request first.
func (s *server) part(claimID string, n int, r *io.SectionReader) error {
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	params, _ := json.Marshal(map[string]any{"claimId": claimID, "partNumber": n})
	for _, kv := range [][2]string{{"resource", "sys/storage"}, {"action", "upload_part"}, {"version", "v1"}, {"params", string(params)}} {
		_ = mw.WriteField(kv[0], kv[1])
	}
	if _, err := mw.CreateFormFile("file", "blob"); err != nil {
		return err
	}
	tail := "\r\n--" + mw.Boundary() + "--\r\n"
	body := io.MultiReader(bytes.NewReader(head.Bytes()), r, strings.NewReader(tail))
	req, _ := http.NewRequest(http.MethodPost, s.url+"/api", body)
	req.ContentLength = int64(head.Len()) + r.Size() + int64(len(tail))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if _, err := s.do(req); err != nil {
		return fmt.Errorf("part %d: %w", n, err)
	}
	return nil
}

// s3Direct uploads the file straight to the S3 server with minio-go, with the same part plan and
// parallelism and the same payload signing as the objstore backend: the ceiling the S3 server
// itself allows, for comparison.
func s3Direct(src string, size, partSize int64, parallel int) (time.Duration, error) {
	ctx := context.Background()
	c, err := s3Client()
	if err != nil {
		return 0, err
	}
	bucket := fmt.Sprintf("bench-direct-%d", time.Now().UnixNano())
	if err := c.Client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		return 0, err
	}
	defer removeBucket(c, bucket)
	f, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	start := time.Now()
	id, err := c.NewMultipartUpload(ctx, bucket, "object", minio.PutObjectOptions{})
	if err != nil {
		return 0, err
	}
	count := int((size + partSize - 1) / partSize)
	parts := make([]minio.CompletePart, count)
	errs := make([]error, count)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range count {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			off := int64(i) * partSize
			n := min(partSize, size-off)
			p, err := c.PutObjectPart(ctx, bucket, "object", id, i+1, io.NewSectionReader(f, off, n), n, minio.PutObjectPartOptions{})
			parts[i], errs[i] = minio.CompletePart{PartNumber: i + 1, ETag: p.ETag}, err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	if _, err := c.CompleteMultipartUpload(ctx, bucket, "object", id, parts, minio.PutObjectOptions{}); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// s3Client is a client of the S3 server in SVC_TEST_S3_*.
func s3Client() (*minio.Core, error) {
	return minio.NewCore(os.Getenv("SVC_TEST_S3_ENDPOINT"), &minio.Options{
		Creds:  credentials.NewStaticV4(os.Getenv("SVC_TEST_S3_ACCESS_KEY"), os.Getenv("SVC_TEST_S3_SECRET_KEY"), ""),
		Region: "us-east-1",
	})
}

// removeBucket deletes a benchmark bucket with its objects and open uploads.
func removeBucket(c *minio.Core, bucket string) {
	ctx := context.Background()
	for o := range c.Client.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		_ = c.Client.RemoveObject(ctx, bucket, o.Key, minio.RemoveObjectOptions{})
	}
	for u := range c.Client.ListIncompleteUploads(ctx, bucket, "", true) {
		_ = c.AbortMultipartUpload(ctx, bucket, u.Key, u.UploadID)
	}
	_ = c.Client.RemoveBucket(ctx, bucket)
}

// randomSecret returns a fresh 32-byte signing secret in hex: svc refuses any fixed value
// published in its repository.
func randomSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}

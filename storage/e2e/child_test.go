package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// buildServer compiles the crash test server into a temporary directory.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "crashserver")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/svc-framework/svc/storage/e2e/crashserver")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build crashserver: %v\n%s", err, out)
	}
	return bin
}

// freePort returns a TCP port nobody listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// writeConfig writes an application.toml for a child on port with the data source ds and the
// storage settings st, and returns its path.
func writeConfig(t *testing.T, dir string, port int, ds config.DataSource, st config.Storage, name string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "[svc.app]\nname = \"svc-app\"\nport = %d\n\n", port)
	fmt.Fprintf(&b, "[svc.security]\nsecret = %q\n\n", svctest.TestSecret)
	fmt.Fprintf(&b, "[svc.data_sources.primary]\ntype = %q\n", ds.Type)
	for k, v := range map[string]string{"host": ds.Host, "user": ds.User, "password": ds.Password, "database": ds.Database, "schema": ds.Schema, "path": ds.Path} {
		if v != "" {
			fmt.Fprintf(&b, "%s = %q\n", k, v)
		}
	}
	if ds.Port != 0 {
		fmt.Fprintf(&b, "port = %d\n", ds.Port)
	}
	fmt.Fprintf(&b, "\n[svc.storage]\nprovider = %q\nauto_migrate = true\nclaim_ttl = %q\nsweep_interval = %q\ndelete_worker_interval = %q\n",
		st.Provider, st.ClaimTTL.String(), st.SweepInterval.String(), st.DeleteWorkerInterval.String())
	fmt.Fprintf(&b, "\n[svc.storage.filesystem]\nroot = %q\n", st.Filesystem.Root)
	o := st.ObjStore
	fmt.Fprintf(&b, "\n[svc.storage.objstore]\nendpoint = %q\naccess_key = %q\nsecret_key = %q\nbucket = %q\nregion = %q\n",
		o.Endpoint, o.AccessKey, o.SecretKey, o.Bucket, o.Region)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// child is a server process of the test.
type child struct {
	t    *testing.T
	bin  string
	url  string
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited and been reaped
	logs logBuffer
	cfg  *config.Config
}

// logBuffer collects a child's output; the process writes it while the test may read it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}

func newChild(t *testing.T, bin string, port int) *child {
	return &child{t: t, bin: bin, url: fmt.Sprintf("http://127.0.0.1:%d", port)}
}

// start runs the server with config path and extra environment, and waits until it is ready.
func (c *child) start(path string, env ...string) {
	c.t.Helper()
	cfg, _, err := config.Load(config.LoadOptions{Path: path, Env: svctest.NoEnv})
	if err != nil {
		c.t.Fatalf("load %s: %v", path, err)
	}
	c.cfg = cfg
	c.logs.Reset()
	c.cmd = exec.Command(c.bin, "-c", path)
	c.cmd.Env = svctest.ChildEnv(env...)
	c.cmd.Stdout, c.cmd.Stderr = &c.logs, &c.logs
	if err := c.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan struct{})
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); close(done) }(c.cmd)
	c.done = done
	c.t.Cleanup(c.kill)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(c.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-done:
			// Exited: its output is complete, and no longer written.
			c.t.Fatalf("server exited before it was ready: %v\n%s", err, c.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("server did not become ready: %v\n%s", err, c.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends the server with SIGKILL (no shutdown of any kind) and waits until it is reaped.
func (c *child) kill() {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	_ = c.cmd.Process.Kill()
	<-c.done
	c.cmd = nil
}

func (c *child) token(id string) string {
	c.t.Helper()
	return svctest.MintToken(c.t, c.cfg, svctest.User(id), time.Now())
}

// envelope is a decoded /api answer.
type envelope struct {
	Status  int
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (c *child) send(req *http.Request, as string) (envelope, error) {
	req.Header.Set("Authorization", "Bearer "+c.token(as))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return envelope{}, err
	}
	defer resp.Body.Close()
	var env envelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return envelope{}, fmt.Errorf("status %d: %w", resp.StatusCode, err)
	}
	env.Status = resp.StatusCode
	return env, nil
}

// call posts a JSON envelope as the user as and decodes data into out (when not nil).
func (c *child) call(action string, params any, as string, out any) envelope {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"resource": "sys/storage", "action": action, "version": "v1", "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.url+"/api", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	env, err := c.send(req, as)
	if err != nil {
		c.t.Fatalf("%s: %v", action, err)
	}
	if out != nil && env.Code == 0 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			c.t.Fatalf("%s: decode %s: %v", action, env.Data, err)
		}
	}
	return env
}

// part sends upload_part with content streamed from r, the way the React uploader does.
func (c *child) part(claimID string, n int, r io.Reader, as string) (envelope, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		params, _ := json.Marshal(map[string]any{"claimId": claimID, "partNumber": n})
		for _, kv := range [][2]string{{"resource", "sys/storage"}, {"action", "upload_part"}, {"version", "v1"}, {"params", string(params)}} {
			_ = mw.WriteField(kv[0], kv[1])
		}
		w, _ := mw.CreateFormFile("file", "blob")
		if _, err := io.Copy(w, r); err != nil {
			pw.CloseWithError(err)
			return
		}
		pw.CloseWithError(mw.Close())
	}()
	req, _ := http.NewRequest(http.MethodPost, c.url+"/api", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return c.send(req, as)
}

// download fetches a file through the proxy as the user as.
func (c *child) download(key, as string) []byte {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.url+"/storage/files/"+key, nil)
	req.Header.Set("Authorization", "Bearer "+c.token(as))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		c.t.Fatalf("download %s: %d %v %s", key, resp.StatusCode, err, b[:min(len(b), 200)])
	}
	return b
}

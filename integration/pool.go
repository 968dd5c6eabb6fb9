package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// errScriptsBusy is a run that found no free worker within the queue wait.
var errScriptsBusy = errors.New("every script worker is busy")

// workerPool runs scripts in worker processes (worker.go): at most Concurrency at once (a run
// beyond waits up to QueueWait for a slot and a started worker, then fails with
// errScriptsBusy), each worker under the memory limit, killed at its run's deadline.
//
// The pool is sized by demand: it starts no worker before the first run, and keeps one started
// worker spare beyond those busy, plus one for every run waiting for a worker, never more than
// Concurrency+1 in all. A run that found no spare waits for a start, within its queue wait and
// before its deadline begins (reserve), so a short run timeout is never spent on a process
// start. A worker that finished its run normally is reused — every run gets a fresh goja
// runtime, which is the isolation between runs, and nothing of a run outlives it in the worker
// but compiled programs —; a worker that was killed, crashed or broke the protocol never is.
type workerPool struct {
	limits Limits
	log    *slog.Logger
	slots  chan struct{}
	ready  chan started

	mu       sync.Mutex
	starting int
	waiting  int
	busy     map[*workerProc]struct{}
	closed   bool
}

// started is a worker that started, or the error of one that could not.
type started struct {
	w   *workerProc
	err error
}

func newWorkerPool(l Limits, log *slog.Logger) *workerPool {
	return &workerPool{limits: l, log: log, slots: make(chan struct{}, l.Concurrency),
		ready: make(chan started, l.Concurrency+1), busy: map[*workerProc]struct{}{}}
}

// lease is a slot and a started worker reserved for one run.
type lease struct {
	p    *workerPool
	w    *workerProc
	once sync.Once
}

// release gives the worker back (a dead one is replaced) and frees the slot.
func (l *lease) release() {
	l.once.Do(func() {
		l.p.put(l.w)
		<-l.p.slots
	})
}

// leaseKey carries a run's lease in its context (Engine.reserve).
type leaseKey struct{}

func leaseOf(ctx context.Context) *lease {
	l, _ := ctx.Value(leaseKey{}).(*lease)
	return l
}

// reserve takes a slot and a started worker, waiting for both at most QueueWait in all
// (errScriptsBusy after it) or until ctx ends.
func (p *workerPool) reserve(ctx context.Context) (*lease, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, p.limits.QueueWait, errScriptsBusy)
	defer cancel()
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	w, err := p.take(ctx)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return &lease{p: p, w: w}, nil
}

// waitErr is why a wait of reserve ended: errScriptsBusy at the queue wait, else ctx's error.
func waitErr(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), errScriptsBusy) {
		return errScriptsBusy
	}
	return ctx.Err()
}

// runHandle lets the caller of a run reach its worker, to kill it at the deadline itself.
type runHandle struct {
	mu sync.Mutex
	w  *workerProc
}

func (h *runHandle) set(w *workerProc) {
	h.mu.Lock()
	h.w = w
	h.mu.Unlock()
}

// kill kills the run's worker, if it has one, and waits until it is reaped.
func (h *runHandle) kill() {
	h.mu.Lock()
	w := h.w
	h.mu.Unlock()
	if w != nil {
		w.kill()
	}
}

// run runs spec on the worker of ctx's lease (or of one it reserves itself, the wait then
// counting against ctx's deadline) with r as its host side, killed when ctx ends. h is given
// the worker.
func (p *workerPool) run(ctx context.Context, r *run, spec *runSpec, h *runHandle) (json.RawMessage, error) {
	l := leaseOf(ctx)
	if l == nil {
		var err error
		if l, err = p.reserve(ctx); err != nil {
			return nil, err
		}
		defer l.release()
	}
	w := l.w
	h.set(w)
	stop := context.AfterFunc(ctx, w.kill)
	out, err := w.exec(ctx, r, spec)
	if !stop() || err != nil && !isScriptFailure(err) {
		w.kill()
	}
	return out, err
}

// isScriptFailure is a run that failed in its script, leaving the worker sound.
func isScriptFailure(err error) bool {
	var fe *failedRun
	return errors.As(err, &fe)
}

// acquire takes a slot, waiting until ctx ends.
func (p *workerPool) acquire(ctx context.Context) error {
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return waitErr(ctx)
	}
}

// warm starts workers in the background until there is one spare (started or starting, idle)
// beyond one for each run waiting, within the pool's size.
func (p *workerPool) warm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.closed && len(p.ready)+p.starting < p.waiting+1 && len(p.ready)+p.starting+len(p.busy) < cap(p.ready) {
		p.starting++
		go func() {
			w, err := startWorker(p.limits)
			p.mu.Lock()
			p.starting--
			closed := p.closed
			p.mu.Unlock()
			if err == nil && closed {
				w.kill()
				return
			}
			select {
			case p.ready <- started{w, err}:
			default: // full (a start error among others): nothing waits for it
				if w != nil {
					w.kill()
				}
			}
		}()
	}
}

// take returns a started worker, waiting for one that is starting until ctx ends; a worker
// that could not start fails the run.
func (p *workerPool) take(ctx context.Context) (*workerProc, error) {
	p.mu.Lock()
	p.waiting++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.waiting--
		p.mu.Unlock()
		p.warm()
	}()
	for {
		p.warm()
		var s started
		select {
		case s = <-p.ready:
		case <-ctx.Done():
			return nil, waitErr(ctx)
		}
		if s.err != nil {
			return nil, fmt.Errorf("script worker: %w", s.err)
		}
		if s.w.dead() {
			continue
		}
		p.mu.Lock()
		p.busy[s.w] = struct{}{}
		p.mu.Unlock()
		return s.w, nil
	}
}

// put returns a sound worker to the idle ones and replaces a dead one.
func (p *workerPool) put(w *workerProc) {
	p.mu.Lock()
	delete(p.busy, w)
	closed := p.closed
	p.mu.Unlock()
	if w.dead() || closed {
		w.kill()
		p.warm()
		return
	}
	select {
	case p.ready <- started{w: w}:
	default:
		w.kill()
	}
	p.warm()
}

// prestart waits until a worker is started and idle (or ctx ends): for tests that must not
// count a start.
func (p *workerPool) prestart(ctx context.Context) error {
	w, err := p.take(ctx)
	if err != nil {
		return err
	}
	p.put(w)
	return nil
}

// pids are the process ids of the workers running a script (for tests and diagnostics).
func (p *workerPool) pids() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for w := range p.busy {
		out = append(out, w.cmd.Process.Pid)
	}
	return out
}

// close ends the idle workers and those that start later; busy ones end after their run.
func (p *workerPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for {
		select {
		case s := <-p.ready:
			if s.w != nil {
				s.w.kill()
			}
		default:
			return
		}
	}
}

// workerProc is one worker process.
type workerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	conn   *frameConn
	stderr *tailBuffer
	exited chan struct{} // closed once the process is reaped
	once   sync.Once
}

// startWorker starts this binary as a worker under the limits. Its environment is only what
// the worker needs: the marker, the limits and GOMEMLIMIT at three quarters of the memory limit
// (the worker's collector works harder before the hard limit, so garbage does not end a run).
func startWorker(l Limits) (*workerProc, error) {
	exe := l.Worker
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(exe, workerArg)
	cmd.Env = []string{workerEnv + "=1",
		workerLimitEnv + "=" + strconv.FormatInt(l.MemoryLimit, 10),
		workerDepthEnv + "=" + strconv.Itoa(l.MaxCallDepth),
		"GOMEMLIMIT=" + strconv.FormatInt(l.MemoryLimit/4*3, 10),
		"GOMAXPROCS=1"}
	cmd.SysProcAttr = workerProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w := &workerProc{cmd: cmd, stdin: stdin, stderr: &tailBuffer{max: 4 << 10}, exited: make(chan struct{})}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w.conn = newFrameConn(stdout, stdin, workerMessageLimit)
	go func() {
		_ = cmd.Wait()
		close(w.exited)
	}()
	if m, err := w.conn.recv(); err != nil || m.Op != "ready" {
		w.kill()
		return nil, fmt.Errorf("the worker did not start (%v): %s", err, firstLine(w.stderr.String()))
	}
	return w, nil
}

// kill ends the process (SIGKILL) and waits until it is reaped.
func (w *workerProc) kill() {
	w.once.Do(func() {
		_ = w.cmd.Process.Kill()
		_ = w.stdin.Close()
	})
	<-w.exited
}

func (w *workerProc) dead() bool {
	select {
	case <-w.exited:
		return true
	default:
		return false
	}
}

// failedRun is a run whose script failed while its worker stayed sound.
type failedRun struct{ err error }

func (e *failedRun) Error() string { return e.err.Error() }
func (e *failedRun) Unwrap() error { return e.err }

// exec runs spec on the worker, serving its host calls with r, and answers the result.
func (w *workerProc) exec(ctx context.Context, r *run, spec *runSpec) (json.RawMessage, error) {
	r.ctx = context.WithValue(r.ctx, procKey{}, w)
	if err := w.conn.send(&wireMessage{Op: "run", Run: spec}); err != nil {
		return nil, w.broken(ctx, err)
	}
	for {
		m, err := w.conn.recv()
		if err != nil {
			return nil, w.broken(ctx, err)
		}
		switch m.Op {
		case "call":
			if err := w.conn.send(r.serve(m)); err != nil {
				return nil, w.broken(ctx, err)
			}
		case "done":
			if m.Err != nil {
				return nil, &failedRun{err: r.failure(m.Err)}
			}
			if m.Value == nil {
				return json.RawMessage("null"), nil
			}
			return m.Value, nil
		default:
			return nil, w.broken(ctx, fmt.Errorf("unexpected message %q", m.Op))
		}
	}
}

// broken is the error of a run whose worker stopped answering: the context's end (it was
// killed for it), its memory limit (the Go runtime's fatal "out of memory"), a message over
// the protocol's limit, or a crash.
func (w *workerProc) broken(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, errMessageTooLarge) {
		return fmt.Errorf("the script's message to the server is over %d bytes", workerMessageLimit)
	}
	w.kill()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	tail := w.stderr.String()
	// Under RLIMIT_DATA a failed mapping surfaces as one of the Go runtime's fatal errors (out
	// of memory, or a thread or stack that could not be mapped).
	if strings.Contains(tail, "out of memory") || strings.Contains(tail, "cannot allocate memory") ||
		strings.Contains(tail, "failed to allocate") || strings.Contains(tail, "pthread_create failed") ||
		strings.Contains(tail, "fatal error: runtime:") {
		return errMemoryLimit
	}
	return fmt.Errorf("the script worker ended (%v): %s", w.cmd.ProcessState, firstLine(tail))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// procKey carries the worker of the run a host call belongs to, so a run started by that host
// call runs nested on the same worker.
type procKey struct{}

func procOf(ctx context.Context) *workerProc {
	w, _ := ctx.Value(procKey{}).(*workerProc)
	return w
}

// tailBuffer keeps the first max bytes written to it (a worker's fatal error starts there).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - t.b.Len(); room > 0 {
		t.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}

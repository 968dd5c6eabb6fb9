package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"

	"github.com/dop251/goja"
)

// A script worker is the binary that embeds this package, started again by itself (os.Executable)
// with workerArg as its only argument and workerEnv set: this package's init sees them and turns
// the process into a worker before main runs, so the svc binary, a host application that
// imports svc as a library and a test binary all become workers the same way, with nothing to
// call from main. The worker lowers its own data-segment limit (RLIMIT_DATA: every private
// writable mapping, so the whole Go heap) to the byte count in workerLimitEnv before it reads
// anything, then runs the scripts the parent sends, one at a time, each in a fresh goja
// runtime, until its stdin closes.
const (
	workerArg      = "svc-integration-script-worker"
	workerEnv      = "SVC_INTEGRATION_WORKER"
	workerLimitEnv = "SVC_INTEGRATION_WORKER_LIMIT"
	workerDepthEnv = "SVC_INTEGRATION_WORKER_CALL_DEPTH"
)

func init() {
	if len(os.Args) == 2 && os.Args[1] == workerArg && os.Getenv(workerEnv) == "1" {
		os.Exit(serveWorker(os.Stdin, os.Stdout, os.Stderr))
	}
}

// serveWorker is a worker's life: its memory limit, then runs until stdin closes. Its exit
// status is 0 at the end of its input; anything else is a broken protocol (the parent kills
// and replaces a worker whatever it exits with).
func serveWorker(in io.Reader, out io.Writer, errOut io.Writer) int {
	limit, err := strconv.ParseUint(os.Getenv(workerLimitEnv), 10, 64)
	if err != nil || limit == 0 {
		fmt.Fprintln(errOut, "svc script worker: no memory limit given")
		return 2
	}
	if err := limitMemory(workerDataLimit(limit)); err != nil {
		fmt.Fprintln(errOut, "svc script worker: cannot set the memory limit:", err)
		return 2
	}
	depth, _ := strconv.Atoi(os.Getenv(workerDepthEnv))
	w := &worker{conn: newFrameConn(in, out, hostMessageLimit),
		e: &Engine{limits: Limits{MaxCallDepth: depth}.withDefaults(), log: slog.New(slog.DiscardHandler),
			programs: map[[32]byte]*goja.Program{}}}
	// A first run pays for the code and the engine's lazy set-up: do it before announcing
	// readiness, so no script's deadline pays for it.
	w.run(&runSpec{Name: "warm-up.js", Body: "return JSON.stringify({a: [1, 'x']}).length", CallDepth: depth})
	if err := w.conn.send(&wireMessage{Op: "ready"}); err != nil {
		return 3
	}
	for {
		m, err := w.conn.recv()
		if errors.Is(err, io.EOF) {
			return 0
		}
		if err != nil || m.Op != "run" || m.Run == nil {
			fmt.Fprintln(errOut, "svc script worker: protocol:", err)
			return 3
		}
		if err := w.conn.send(w.run(m.Run)); err != nil {
			return 3
		}
	}
}

// worker runs the scripts of one worker process.
type worker struct {
	conn *frameConn
	e    *Engine
}

// hostError is a Go error a host call returned in the parent, named by its reference there.
type hostError struct {
	ref int
	msg string
}

func (e *hostError) Error() string { return e.msg }

// run runs one script and answers its "done" message.
func (w *worker) run(spec *runSpec) (done *wireMessage) {
	done = &wireMessage{Op: "done"}
	out, err := w.exec(spec)
	if err != nil {
		done.Err = workerFailure(err)
		return done
	}
	done.Value = out
	return done
}

func (w *worker) exec(spec *runSpec) (out json.RawMessage, err error) {
	p, err := w.e.compile(shapeBody, spec.Name, spec.Body)
	if err != nil {
		return nil, err
	}
	vm := goja.New()
	vm.SetFieldNameMapper(goja.TagFieldNameMapper("json", true))
	vm.SetMaxCallStackSize(max(spec.CallDepth, 1))
	r := &run{e: w.e, ctx: context.Background(), vm: vm, stop: func() bool { return true }, done: func() {}}
	defer func() {
		if x := recover(); x != nil {
			out, err = nil, fmt.Errorf("internal error in a host function: %v", x)
		}
	}()
	r.installLibraries()
	for _, g := range spec.Globals {
		v := r.fromJSON(g.JSON)
		if g.Text != nil {
			if o, ok := v.(*goja.Object); ok {
				o.Set("body", string(g.Text))
			}
		}
		if err := vm.Set(g.Name, v); err != nil {
			return nil, err
		}
	}
	for _, h := range spec.Host {
		if err := w.bindHost(r, h, spec.Envelope); err != nil {
			return nil, err
		}
	}
	v, err := r.exec(p)
	if err != nil {
		return nil, err
	}
	return r.toJSON(v)
}

// bindHost defines a host binding in the run: its methods call the parent. console formats its
// arguments here (the parent masks and logs the text), http is the scoped library whose wire
// calls the parent makes (workerhttp.go).
func (w *worker) bindHost(r *run, h hostObject, env *wireEnvelope) error {
	vm := r.vm
	switch {
	case h.Name == "http":
		return w.bindHTTP(r, env)
	case h.Name == "console":
		o := vm.NewObject()
		for _, m := range h.Methods {
			o.Set(m, func(c goja.FunctionCall) goja.Value {
				parts := make([]goja.Value, len(c.Arguments))
				for i, a := range c.Arguments {
					parts[i] = vm.ToValue(consoleText(r, a))
				}
				return w.call(r, h.Name, m, parts)
			})
		}
		return vm.Set(h.Name, o)
	case len(h.Methods) == 0:
		return vm.Set(h.Name, func(c goja.FunctionCall) goja.Value { return w.call(r, h.Name, "", c.Arguments) })
	}
	o := vm.NewObject()
	for _, m := range h.Methods {
		o.Set(m, func(c goja.FunctionCall) goja.Value { return w.call(r, h.Name, m, c.Arguments) })
	}
	return vm.Set(h.Name, o)
}

// call sends a host call and waits for its reply, running any nested script the parent sends
// meanwhile. A reply's error is thrown in the script: a Go error of the parent as a GoError
// naming it, a JavaScript error by its type.
func (w *worker) call(r *run, object, method string, args []goja.Value) goja.Value {
	m := &wireMessage{Op: "call", Object: object, Method: method, Args: make([]json.RawMessage, len(args))}
	for i, a := range args {
		if a == nil || goja.IsUndefined(a) {
			m.Undef = append(m.Undef, i)
			m.Args[i] = json.RawMessage("null")
			continue
		}
		raw, err := r.toJSON(a)
		if err != nil {
			panic(r.vm.NewTypeError(err.Error()))
		}
		m.Args[i] = raw
	}
	reply := w.roundTrip(m)
	if reply.Err != nil {
		panic(w.thrown(r, reply.Err))
	}
	if reply.Value == nil {
		return goja.Undefined()
	}
	return r.fromJSON(reply.Value)
}

// roundTrip sends m and answers the parent's reply. A broken pipe ends the worker: its parent
// is gone or has given up on it.
func (w *worker) roundTrip(m *wireMessage) *wireMessage {
	if err := w.conn.send(m); err != nil {
		os.Exit(3)
	}
	for {
		in, err := w.conn.recv()
		if err != nil {
			os.Exit(3)
		}
		switch {
		case in.Op == "reply":
			return in
		case in.Op == "run" && in.Run != nil:
			if err := w.conn.send(w.run(in.Run)); err != nil {
				os.Exit(3)
			}
		default:
			os.Exit(3)
		}
	}
}

// thrown is the script value of a host call's error.
func (w *worker) thrown(r *run, e *wireError) goja.Value {
	if e.Ref > 0 {
		return r.vm.NewGoError(&hostError{ref: e.Ref, msg: e.Message})
	}
	if e.Name != "" {
		if ctor, ok := goja.AssertConstructor(r.vm.Get(e.Name)); ok {
			if v, err := ctor(nil, r.vm.ToValue(e.Message)); err == nil {
				return v
			}
		}
	}
	return r.vm.NewGoError(errors.New(e.Message))
}

// workerFailure is a run's error as it crosses to the parent.
func workerFailure(err error) *wireError {
	out := &wireError{Message: err.Error()}
	var (
		he *hostError
		so *goja.StackOverflowError
		ke *kindError
	)
	switch {
	case errors.As(err, &he):
		out.Ref = he.ref
	case errors.As(err, &so):
		out.Kind = wireKindCallDepth
	case errors.Is(err, errNeverSettles):
		out.Kind = wireKindNever
	case errors.As(err, &ke):
		out.Kind, out.Message = wireKindEnvelope, scriptMessage(ke.err)
	}
	return out
}

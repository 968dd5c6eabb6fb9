package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"

	"github.com/dop251/goja"
)

// rawFunc is a host binding that takes and answers JSON itself (http.send), without the host
// runtime's conversion.
type rawFunc func(args []json.RawMessage) (json.RawMessage, error)

// hostSide is what a run's host side holds beyond its runtime: the raw bindings, the data
// globals given as JSON, the envelope scripts, and the Go errors its host calls returned (the
// worker names them by reference, so a failure is classified by its real type).
type hostSide struct {
	raw      map[string]rawFunc
	rawObjs  map[string][]string
	data     []wireGlobal
	envelope *wireEnvelope
	refs     []error
	names    []string // the globals set (set), in order
}

// jsError is a host call's failure the script sees as a JavaScript error of the type name.
type jsError struct{ name, msg string }

func (e *jsError) Error() string { return e.msg }

// remoteError is a run's failure caused by a host call's Go error: the message as the script's
// failure read, unwrapping to that error.
type remoteError struct {
	msg   string
	cause error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.cause }

// installHostBaseline defines the host bindings every surface has: console (masked and logged
// here, where the secrets are) and cache (the process's script cache).
func (r *run) installHostBaseline(logAttrs []any) {
	r.set("console", r.consoleLib(logAttrs))
	r.set("cache", r.cacheLib())
}

// set defines the global name in the run's host runtime, to cross to the worker (spec): a
// binding (a function, or an object of functions) is called back, any other value is copied as
// JSON. Only globals defined here cross: the worker sees what the surface set, never the host
// runtime's own builtins (which spec would otherwise have to list, at a cost per run).
func (r *run) set(name string, v any) error {
	if !slices.Contains(r.host.names, name) {
		r.host.names = append(r.host.names, name)
	}
	return r.vm.Set(name, v)
}

// bindRaw defines object.method as a raw binding.
func (r *run) bindRaw(object, method string, fn rawFunc) {
	if r.host.raw == nil {
		r.host.raw, r.host.rawObjs = map[string]rawFunc{}, map[string][]string{}
	}
	r.host.raw[object+"."+method] = fn
	r.host.rawObjs[object] = append(r.host.rawObjs[object], method)
}

// setData defines the global name as the JSON value raw; text, when not nil, becomes its body
// property as one string.
func (r *run) setData(name string, raw json.RawMessage, text []byte) {
	r.host.data = append(r.host.data, wireGlobal{Name: name, JSON: raw, Text: text})
}

// spec is the run as a worker runs it: the data globals (setData's, then every value set
// defined that is not a binding, as JSON) and the host bindings (functions, and objects whose
// properties are all functions).
func (r *run) spec(name, body string) (*runSpec, error) {
	s := &runSpec{Name: name, Body: body, Globals: r.host.data, Envelope: r.host.envelope, CallDepth: r.e.limits.MaxCallDepth}
	global := r.vm.GlobalObject()
	for _, k := range r.host.names {
		v := global.Get(k)
		if methods, ok := hostMethods(v); ok {
			s.Host = append(s.Host, hostObject{Name: k, Methods: methods})
			continue
		}
		raw, err := r.toJSON(v)
		if err != nil {
			return nil, err
		}
		s.Globals = append(s.Globals, wireGlobal{Name: k, JSON: raw})
	}
	objs := make([]string, 0, len(r.host.rawObjs))
	for o := range r.host.rawObjs {
		objs = append(objs, o)
	}
	sort.Strings(objs)
	for _, o := range objs {
		s.Host = append(s.Host, hostObject{Name: o, Methods: r.host.rawObjs[o]})
	}
	return s, nil
}

// hostMethods reports a binding: a function (no methods) or an object of functions.
func hostMethods(v goja.Value) ([]string, bool) {
	if _, ok := goja.AssertFunction(v); ok {
		return nil, true
	}
	o, ok := v.(*goja.Object)
	if !ok {
		return nil, false
	}
	keys := o.Keys()
	if len(keys) == 0 {
		return nil, false
	}
	for _, k := range keys {
		if _, ok := goja.AssertFunction(o.Get(k)); !ok {
			return nil, false
		}
	}
	return keys, true
}

// serve answers a worker's host call.
func (r *run) serve(m *wireMessage) *wireMessage {
	reply := &wireMessage{Op: "reply"}
	v, err := r.callHost(m)
	if err != nil {
		reply.Err = r.hostFailure(err)
		return reply
	}
	reply.Value = v
	return reply
}

// callHost runs the binding a call names with its arguments converted into the host runtime.
// A Go panic in a binding fails the call, not the process.
func (r *run) callHost(m *wireMessage) (out json.RawMessage, err error) {
	defer func() {
		if x := recover(); x != nil {
			r.e.log.ErrorContext(r.ctx, "integration: script host call panic", slog.Any("panic", x))
			out, err = nil, fmt.Errorf("internal error in a host function: %v", x)
		}
	}()
	if fn := r.host.raw[m.Object+"."+m.Method]; fn != nil {
		return fn(m.Args)
	}
	target := r.vm.GlobalObject().Get(m.Object)
	var this goja.Value = goja.Undefined()
	fnv := target
	if m.Method != "" {
		o, ok := target.(*goja.Object)
		if !ok {
			return nil, &jsError{name: "TypeError", msg: m.Object + " is not an object"}
		}
		this, fnv = o, o.Get(m.Method)
	}
	fn, ok := goja.AssertFunction(fnv)
	if !ok {
		return nil, &jsError{name: "TypeError", msg: m.Object + "." + m.Method + " is not a function"}
	}
	args := make([]goja.Value, len(m.Args))
	for i, a := range m.Args {
		args[i] = r.fromJSON(a)
	}
	for _, i := range m.Undef {
		if i >= 0 && i < len(args) {
			args[i] = goja.Undefined()
		}
	}
	v, err := fn(this, args...)
	if err != nil {
		return nil, err
	}
	if v == nil || goja.IsUndefined(v) {
		return nil, nil
	}
	return r.toJSON(v)
}

// hostFailure is a host call's error as the worker throws it: a Go error by reference, a
// JavaScript error by type and message.
func (r *run) hostFailure(err error) *wireError {
	var je *jsError
	if errors.As(err, &je) {
		return &wireError{Name: je.name, Message: je.msg}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		if o, ok := ex.Value().(*goja.Object); ok {
			if gv := o.Get("value"); gv != nil {
				if ge, ok := gv.Export().(error); ok {
					return r.ref(ge)
				}
			}
			if name, msg := o.Get("name"), o.Get("message"); name != nil && msg != nil {
				return &wireError{Name: name.String(), Message: msg.String()}
			}
		}
	}
	return r.ref(err)
}

func (r *run) ref(err error) *wireError {
	r.host.refs = append(r.host.refs, err)
	return &wireError{Ref: len(r.host.refs), Message: err.Error()}
}

// failure is a run's error from the worker's report.
func (r *run) failure(e *wireError) error {
	switch e.Kind {
	case wireKindCallDepth:
		return errCallDepth
	case wireKindNever:
		return errNeverSettles
	case wireKindEnvelope:
		return &kindError{kind: KindConfig, err: detail(ErrInvalidEnvelope, e.Message)}
	}
	if e.Ref > 0 && e.Ref <= len(r.host.refs) {
		return &remoteError{msg: e.Message, cause: r.host.refs[e.Ref-1]}
	}
	return errors.New(e.Message)
}

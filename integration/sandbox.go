package integration

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dop251/goja"
)

// slotBytes is what one array element costs at least: a goja.Value (an interface) in the
// array's backing slice. Element counts are charged at this rate against MaxAllocBytes.
const slotBytes = 16

// guard is the first memory layer of one run (see Limits). The VM checks for an interrupt only
// between its own steps, so a builtin that builds a large value in one native call —
// Array(3e7).fill({}), new Uint8Array(1.5e9), Array(1e9).join() — allocates all of it before the
// heap watchdog can act, and a single call could take gigabytes. Every such builtin is replaced
// on the run's runtime, before the script runs, by a wrapper that computes the size the call
// will build from its arguments and throws a RangeError over MaxAllocBytes before the builtin
// allocates anything; under the limit the builtin itself runs, so the spec's behaviour is kept.
// The error is catchable, as an engine's own "Invalid array length" is: nothing was allocated.
//
// The sizes are upper bounds computed without running script code: array and typed-array
// lengths, arguments lists, the result of repeat/pad/replace/split/concat/join/flat, and the
// serialized size of JSON.stringify counted value by value while it serializes (sandbox_json.go).
// Builtins whose output is at most a small constant factor of an input that already exists
// (toUpperCase, encodeURIComponent, JSON.parse, one regexp match) are left to the watchdog.
type guard struct {
	r        *run
	maxBytes int64
	maxElems int64
	// base is the runtime's own global object, behind the run's (see lazyGlobal): its builtins
	// are the originals, whatever the script assigns to its globals.
	base *goja.Object
	// callable is a builtin function, the target of the proxies native makes.
	callable *goja.Object
	// wrapped are the wrappers of the builtins wrapped, pre their checks; one trap set serves
	// them all.
	wrapped map[*goja.Object]goja.Value
	pre     map[*goja.Object]func(goja.FunctionCall) goja.FunctionCall
	traps   *goja.ProxyTrapConfig
	// targets are the constructors behind the proxies; hasInstance is their instanceof.
	targets     map[*goja.Object]*goja.Object
	hasInstance goja.Value
	// stringifyFn is the builtin JSON.stringify, called with the counting replacer.
	stringifyFn goja.Callable
}

// installGuards puts the run's own global object in front of the runtime's and wraps the
// size-setting builtins: those a script reaches without naming a global (Array.prototype and,
// through [].constructor, Array; String.prototype; RegExp.prototype; Function.prototype.apply;
// Object's statics through ({}).constructor) at once, those it reaches only through their global
// (the typed arrays, ArrayBuffer, Reflect, JSON) on the first read of that global. Each wrapped
// builtin costs a run about a microsecond — goja creates a builtin the first time it is touched —
// so the lazy ones cost nothing to the scripts that never name them.
func (r *run) installGuards() {
	vm := r.vm
	base := vm.GlobalObject()
	global := vm.NewObject()
	global.SetPrototype(base)
	global.DefineDataProperty("globalThis", global, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	vm.SetGlobalObject(global)
	max := r.e.limits.MaxAllocBytes
	g := &guard{r: r, maxBytes: max, maxElems: max / slotBytes, base: base, callable: base.Get("Object").(*goja.Object),
		wrapped: map[*goja.Object]goja.Value{}, targets: map[*goja.Object]*goja.Object{}}
	r.guard = g
	g.guardArray()
	g.guardStrings()
	g.wrap(g.proto("Function"), "apply", g.argList(1))
	g.lazyGlobal("Reflect", func(v goja.Value) goja.Value {
		reflect := v.ToObject(vm)
		g.wrap(reflect, "apply", g.argList(2))
		g.wrap(reflect, "construct", g.argList(1))
		return v
	})
	g.lazyGlobal("JSON", g.guardJSON)
	for _, ta := range typedArrays {
		g.lazyGlobal(ta.name, g.typedArray(ta.size, ta.name == "ArrayBuffer"))
	}
}

// lazyGlobal makes name an accessor of the run's global object that, on the first read, builds
// the guarded value from the builtin of the runtime's global and keeps it as a plain global.
// Defining over the builtin's own global property would create the builtin; defined on the
// run's object, which hides it, it costs nothing until the script names it. It has no setter:
// a strict script assigning to one of these globals before reading it gets a TypeError.
func (g *guard) lazyGlobal(name string, build func(goja.Value) goja.Value) {
	global := g.r.vm.GlobalObject()
	get := g.native(func(goja.Value, []goja.Value) goja.Value {
		v := build(g.base.Get(name))
		global.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		return v
	})
	global.DefineAccessorProperty(name, get, nil, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// applyWrapped is the call of every wrapped builtin: its check, then the builtin.
func (g *guard) applyWrapped(target *goja.Object, this goja.Value, args []goja.Value) goja.Value {
	c := g.pre[target](goja.FunctionCall{This: this, Arguments: args})
	orig, _ := goja.AssertFunction(target)
	v, err := orig(c.This, c.Arguments...)
	if err != nil {
		g.r.rethrow(err)
	}
	return v
}

// native is a function calling f: a proxy of a builtin, which goja makes several times faster
// than a function from a Go func (that one looks its Go name up).
func (g *guard) native(f func(this goja.Value, args []goja.Value) goja.Value) goja.Value {
	return g.r.vm.ToValue(g.r.vm.NewProxy(g.callable, &goja.ProxyTrapConfig{
		Apply: func(_ *goja.Object, this goja.Value, args []goja.Value) goja.Value { return f(this, args) },
	}))
}

// refuse throws the RangeError for an allocation of n bytes.
func (g *guard) refuse(n int64) {
	msg := fmt.Sprintf("allocation of %d bytes exceeds the script memory limit (%d bytes)", n, g.maxBytes)
	if rangeErr, ok := goja.AssertConstructor(g.base.Get("RangeError")); ok {
		if e, err := rangeErr(nil, g.r.vm.ToValue(msg)); err == nil {
			panic(e)
		}
	}
	panic(g.r.vm.NewTypeError(msg))
}

// bytes refuses a value of n bytes over the limit.
func (g *guard) bytes(n int64) {
	if n < 0 || n > g.maxBytes {
		g.refuse(n)
	}
}

// elems refuses n array elements (or list entries) over the limit.
func (g *guard) elems(n int64) {
	if n < 0 || n > g.maxElems {
		g.refuse(mul(n, slotBytes))
	}
}

// mul is a*b for non-negative operands, saturating at MaxInt64 (sizes come from script numbers).
func mul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// add is a+b for non-negative operands, saturating at MaxInt64.
func add(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// wrap replaces obj's method key (a string or a *goja.Symbol) by a proxy of the builtin whose
// call runs pre — which checks sizes and may rewrite the arguments — before the builtin. A proxy
// keeps the builtin's name, length and identity checks (the same builtin under two keys gets one
// wrapper) and costs less per run than a new native function. It returns the wrapper (nil when
// obj has no such method).
func (g *guard) wrap(obj *goja.Object, key any, pre func(c goja.FunctionCall) goja.FunctionCall) goja.Value {
	var old goja.Value
	switch k := key.(type) {
	case string:
		old = obj.Get(k)
	case *goja.Symbol:
		old = obj.GetSymbol(k)
	}
	target, ok := old.(*goja.Object)
	if !ok {
		return nil
	}
	fn, ok := g.wrapped[target]
	if !ok {
		if _, ok := goja.AssertFunction(target); !ok {
			return nil
		}
		if g.traps == nil {
			g.pre = map[*goja.Object]func(goja.FunctionCall) goja.FunctionCall{}
			g.traps = &goja.ProxyTrapConfig{Apply: g.applyWrapped}
		}
		g.pre[target] = pre
		fn = g.r.vm.ToValue(g.r.vm.NewProxy(target, g.traps))
		g.wrapped[target] = fn
	}
	switch k := key.(type) {
	case string:
		obj.Set(k, fn)
	case *goja.Symbol:
		obj.SetSymbol(k, fn)
	}
	return fn
}

// proto is the prototype object of the global constructor name.
func (g *guard) proto(name string) *goja.Object {
	return g.r.vm.Get(name).ToObject(g.r.vm).Get("prototype").ToObject(g.r.vm)
}

// lengthOf is ToLength(o.length) of an object, 0 for anything else.
func lengthOf(v goja.Value) int64 {
	o, ok := v.(*goja.Object)
	if !ok {
		return 0
	}
	l := o.Get("length")
	if l == nil {
		return 0
	}
	n := l.ToNumber().ToFloat()
	switch {
	case math.IsNaN(n) || n <= 0:
		return 0
	case n >= 1<<53:
		return 1<<53 - 1
	}
	return int64(n)
}

// receiverLength is the length of a method's receiver as the builtin will read it; a receiver
// that is not object-coercible reads 0 (the builtin throws its own TypeError).
func (g *guard) receiverLength(this goja.Value) int64 {
	if this == nil || goja.IsUndefined(this) || goja.IsNull(this) {
		return 0
	}
	return lengthOf(this.ToObject(g.r.vm))
}

// isArray reports an Array instance (not an array-like).
func isArray(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	return ok && o.ClassName() == "Array"
}

// strLen is the length (UTF-16 units) of a primitive's string form. Objects are not converted
// here (their toString is script code the builtin will call itself); they count 16.
func strLen(v goja.Value) int64 {
	if _, ok := v.(*goja.Object); ok {
		return 16
	}
	if s, ok := v.(goja.String); ok {
		return int64(s.Length())
	}
	if v == nil {
		return 0
	}
	return int64(len(v.String()))
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

package integration

import (
	"github.com/dop251/goja"
)

// guardJSON makes JSON.stringify count the text it writes. Its output is not bounded by the
// size of its input: a value referenced twice is written twice, so ten levels of [x, x] write x
// a thousand times, all inside one native call. The builtin calls a replacer function once per
// value it writes, in order, before writing it; the wrapper passes its own replacer (calling the
// script's replacer function first, or applying the script's property list), which adds up an
// upper bound of the bytes each value adds and throws the RangeError once the total passes the
// limit — the text written so far is then at most about the limit.
func (g *guard) guardJSON(v goja.Value) goja.Value {
	j := v.ToObject(g.r.vm)
	g.stringifyFn, _ = goja.AssertFunction(j.Get("stringify"))
	g.wrap(j, "stringify", func(c goja.FunctionCall) goja.FunctionCall {
		c.Arguments = g.countingArgs(c.Arguments)
		return c
	})
	return v
}

// stringify is JSON.stringify(v) with the count, for the host's own serializations (results,
// cache values, dispatched inputs), which a script could otherwise make as large as it likes
// with shared references, or divert by replacing the global.
func (g *guard) stringify(v goja.Value) (goja.Value, error) {
	if g.stringifyFn == nil { // the script never read JSON: the builtin is unwrapped
		g.stringifyFn, _ = goja.AssertFunction(g.base.Get("JSON").ToObject(g.r.vm).Get("stringify"))
	}
	return g.stringifyFn(goja.Undefined(), g.countingArgs([]goja.Value{v})...)
}

// jsonCount is one stringify call's count.
type jsonCount struct {
	g     *guard
	user  goja.Callable // the script's replacer function
	keys  []string      // the script's property list (a replacer array)
	gap   int64         // indentation per level
	stack []*goja.Object
	total int64
}

// countingArgs are stringify's arguments with the counting replacer in place of the script's.
func (g *guard) countingArgs(args []goja.Value) []goja.Value {
	arg := func(i int) goja.Value {
		if i < len(args) {
			return args[i]
		}
		return goja.Undefined()
	}
	j := &jsonCount{g: g, gap: gapLen(arg(2))}
	if fn, ok := goja.AssertFunction(arg(1)); ok {
		j.user = fn
	} else if isArray(arg(1)) {
		j.keys = propertyList(arg(1).(*goja.Object))
	}
	return []goja.Value{arg(0), g.r.vm.ToValue(j.replace), arg(2)}
}

// gapLen is the indentation stringify derives from its space argument (at most 10).
func gapLen(space goja.Value) int64 {
	if o, ok := space.(*goja.Object); ok {
		switch o.ClassName() {
		case "Number":
			space = space.ToNumber()
		case "String":
			space = space.ToString()
		}
	}
	var n int64
	switch space.Export().(type) {
	case string:
		n = strLen(space)
	case int64, float64:
		n = space.ToInteger()
	}
	return max(0, min(n, 10))
}

// propertyList is the key list of a replacer array: its strings and numbers (boxed too), each
// once, in order.
func propertyList(a *goja.Object) []string {
	var keys []string
	seen := map[string]bool{}
	for i, l := int64(0), lengthOf(a); i < l; i++ {
		v := a.Get(itoa(i))
		if o, ok := v.(*goja.Object); ok {
			if c := o.ClassName(); c != "String" && c != "Number" {
				continue
			}
			v = o.ToString()
		}
		switch v.Export().(type) {
		case string, int64, float64:
		default:
			continue
		}
		if k := v.String(); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// replace is the counting replacer: the script's replacer or property list, then the count.
func (j *jsonCount) replace(c goja.FunctionCall) goja.Value {
	key, v := c.Argument(0), c.Argument(1)
	switch {
	case j.user != nil:
		var err error
		if v, err = j.user(c.This, key, v); err != nil {
			j.g.r.rethrow(err)
		}
	case j.keys != nil:
		v = j.pick(v)
	}
	j.charge(c.This, key, v)
	return v
}

// pick is an object reduced to the property list, in the list's order, as stringify writes an
// object under a replacer array; arrays and primitives (boxed too) are written whole.
func (j *jsonCount) pick(v goja.Value) goja.Value {
	o, ok := v.(*goja.Object)
	if !ok || isArray(o) {
		return v
	}
	if _, callable := goja.AssertFunction(o); callable {
		return v
	}
	switch o.ClassName() {
	case "Number", "String", "Boolean", "BigInt", "RawJSON":
		return v
	}
	out := j.g.r.vm.NewObject()
	for _, k := range j.keys {
		if pv := o.Get(k); pv != nil {
			out.Set(k, pv)
		}
	}
	return out
}

// charge adds what v, written under key in holder, adds to the text: separator, newline and
// indentation, the key, and the value (an object's brackets; its members come as their own
// calls).
func (j *jsonCount) charge(holder, key, v goja.Value) {
	h, _ := holder.(*goja.Object) // always an object: the builtin's holder
	for len(j.stack) > 0 && j.stack[len(j.stack)-1] != h {
		j.stack = j.stack[:len(j.stack)-1]
	}
	n := valueBytes(v)
	if n == 0 {
		return // undefined, a function or a symbol: not written
	}
	depth := int64(len(j.stack))
	n = add(n, 1+mul(j.gap, depth+1)+1) // comma, newline and indentation
	if !isArray(holder) {
		n = add(n, strLen(key)+4) // "key":<space>
	}
	if o, ok := v.(*goja.Object); ok {
		j.stack = append(j.stack, o)
		n = add(n, mul(j.gap, depth)+1) // the closing bracket's line
	}
	j.total = add(j.total, n)
	j.g.bytes(j.total)
}

// valueBytes is at most what stringify writes for v itself (0: nothing).
func valueBytes(v goja.Value) int64 {
	if v == nil || goja.IsUndefined(v) {
		return 0
	}
	if o, ok := v.(*goja.Object); ok {
		if _, callable := goja.AssertFunction(o); callable {
			return 0
		}
		switch o.ClassName() {
		case "String":
			return quoted(o.ToString())
		case "Number", "Boolean":
			return 24
		case "RawJSON":
			return strLen(o.Get("rawJSON"))
		}
		return 2
	}
	if s, ok := v.(goja.String); ok {
		return quoted(s)
	}
	if _, ok := v.(*goja.Symbol); ok {
		return 0
	}
	return max(int64(len(v.String())), 4) // numbers, booleans, null; BigInt throws in the builtin
}

// quoted is a string's JSON length: quotes, and six characters for each one escaped as \uXXXX
// (short escapes are shorter).
func quoted(v goja.Value) int64 {
	s := v.String()
	n := int64(len(s)) + 2
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b == '"' || b == '\\' {
			n += 5
		}
	}
	return n
}

package integration

import (
	"math"
	"reflect"

	"github.com/dop251/goja"
)

// guardArray wraps the Array constructor (a proxy, so `new`, subclasses, statics and species all
// go through one check of the requested length) and the Array.prototype methods that allocate
// in proportion to their receiver's length. A huge length costs nothing to make — a.length = n
// cannot be intercepted, an array-like is {length: n} — and goja's fast paths for such an array
// allocate a slice of its full length (slice, map, sort, splice, toReversed…), fill writes every
// index, join and toString write every separator, and the iterators feed spread and Array.from.
// The methods that only read (indexOf, forEach, reduce…) are not wrapped: on a huge sparse array
// they spin without allocating, which the heap does not see and the deadline cannot interrupt
// (a native loop); wrapping every method would cost each run about 40 µs more.
func (g *guard) guardArray() {
	vm := g.r.vm
	target := vm.Get("Array").ToObject(vm)
	check := func(args []goja.Value) {
		// Array(n) with a number n; a negative or fractional n is the builtin's own RangeError.
		if len(args) == 1 {
			if n, ok := args[0].Export().(int64); ok && n > g.maxElems {
				g.elems(n)
			} else if f, ok := args[0].Export().(float64); ok && f > float64(g.maxElems) {
				g.elems(int64(min(f, math.MaxInt64)))
			}
		}
	}
	ctor, _ := goja.AssertConstructor(target)
	call, _ := goja.AssertFunction(target)
	p := vm.NewProxy(target, &goja.ProxyTrapConfig{
		Construct: func(_ *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
			check(args)
			o, err := ctor(newTarget, args...)
			if err != nil {
				g.r.rethrow(err)
			}
			return o
		},
		Apply: func(_ *goja.Object, this goja.Value, args []goja.Value) goja.Value {
			check(args)
			v, err := call(this, args...)
			if err != nil {
				g.r.rethrow(err)
			}
			return v
		},
	})
	array := g.constructor(target, p)
	vm.GlobalObject().DefineDataProperty("Array", array, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	proto := target.Get("prototype").ToObject(vm)
	proto.DefineDataProperty("constructor", array, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)

	byLength := func(c goja.FunctionCall) goja.FunctionCall {
		g.elems(g.receiverLength(c.This))
		return c
	}
	for _, name := range []string{"copyWithin", "fill", "map", "reverse", "slice", "sort", "toReversed", "toSorted",
		"with", "values", "keys", "entries"} {
		g.wrap(proto, name, byLength)
	}
	g.wrap(proto, "concat", g.concatSize)
	g.wrap(proto, "flat", g.flatSize)
	g.wrap(proto, "join", g.joinSize(true))
	g.wrap(proto, "toString", g.joinSize(false))
	g.wrap(proto, "toLocaleString", g.joinSize(false))
	withItems := func(c goja.FunctionCall) goja.FunctionCall {
		g.elems(add(g.receiverLength(c.This), int64(len(c.Arguments))))
		return c
	}
	for _, name := range []string{"splice", "toSpliced", "unshift"} {
		g.wrap(proto, name, withItems)
	}
	g.wrap(proto, goja.SymIterator, byLength)
}

// concatSize: the result has the receiver's and every spreadable argument's elements.
func (g *guard) concatSize(c goja.FunctionCall) goja.FunctionCall {
	n := int64(1)
	if isArray(c.This) {
		n = lengthOf(c.This)
	}
	for _, a := range c.Arguments {
		if isArray(a) || isSpreadable(a) {
			n = add(n, lengthOf(a))
		} else {
			n = add(n, 1)
		}
	}
	g.elems(n)
	return c
}

func isSpreadable(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	if !ok {
		return false
	}
	s := o.GetSymbol(goja.SymIsConcatSpreadable)
	return s != nil && s.ToBoolean()
}

// flatSize counts the elements flat(depth) would produce, through shared sub-arrays once each
// (a DAG of n levels would otherwise be 2^n), stopping as soon as the count is over the limit.
func (g *guard) flatSize(c goja.FunctionCall) goja.FunctionCall {
	depth := int64(1)
	if d := c.Argument(0); !goja.IsUndefined(d) {
		depth = d.ToInteger()
	}
	g.elems(g.receiverLength(c.This))
	if o, ok := c.This.(*goja.Object); ok {
		memo := map[flatKey]int64{}
		g.elems(g.flatCount(o, depth, memo))
	}
	return c
}

type flatKey struct {
	o     *goja.Object
	depth int64
}

func (g *guard) flatCount(o *goja.Object, depth int64, memo map[flatKey]int64) int64 {
	if depth > 1<<20 {
		depth = 1 << 20 // Infinity: deeper than any array the call stack could have built
	}
	k := flatKey{o, depth}
	if n, ok := memo[k]; ok {
		return n
	}
	memo[k] = 0 // a cycle counts nothing more (flat itself would overflow the stack)
	l := lengthOf(o)
	g.elems(l)
	var n int64
	for i := int64(0); i < l; i++ {
		e := o.Get(itoa(i))
		if sub, ok := e.(*goja.Object); ok && depth > 0 && isArray(sub) {
			n = add(n, g.flatCount(sub, depth-1, memo))
		} else {
			n++
		}
		if n > g.maxElems {
			g.elems(n)
		}
	}
	memo[k] = n
	return n
}

// joinSize checks the string join (or toString, which joins with ",") would build: every
// element's text and the separators, nested arrays joined in turn (shared ones counted each
// time they appear, as join writes them, but walked once).
func (g *guard) joinSize(withSep bool) func(c goja.FunctionCall) goja.FunctionCall {
	return func(c goja.FunctionCall) goja.FunctionCall {
		g.elems(g.receiverLength(c.This))
		sep := int64(1)
		if s := c.Argument(0); withSep && !goja.IsUndefined(s) {
			sep = strLen(s)
		}
		if o, ok := c.This.(*goja.Object); ok {
			g.bytes(g.joinBytes(o, sep, map[*goja.Object]int64{}))
		}
		return c
	}
}

func (g *guard) joinBytes(o *goja.Object, sep int64, memo map[*goja.Object]int64) int64 {
	if n, ok := memo[o]; ok {
		return n
	}
	memo[o] = 0 // join writes a cycle as ""
	l := lengthOf(o)
	g.elems(l)
	n := mul(max(l-1, 0), sep)
	for i := int64(0); i < l && n <= g.maxBytes; i++ {
		n = add(n, g.textBytes(o.Get(itoa(i)), memo))
	}
	g.bytes(n)
	memo[o] = n
	return n
}

// textBytes is the length of an element's text in a join; an object other than an array counts
// as "[object Object]" (its own toString is script code, run step by step).
func (g *guard) textBytes(v goja.Value, memo map[*goja.Object]int64) int64 {
	switch {
	case v == nil || goja.IsUndefined(v) || goja.IsNull(v):
		return 0
	case isArray(v):
		return g.joinBytes(v.(*goja.Object), 1, memo)
	}
	if _, ok := v.(*goja.Object); ok {
		return 16
	}
	return strLen(v)
}

// constructor returns the proxy p of the constructor target as a value, and makes instanceof
// work on it: goja's proxies have no [[HasInstance]] of their own, so target gets a
// Symbol.hasInstance method (found through the proxy) running the ordinary check on target.
func (g *guard) constructor(target *goja.Object, p goja.Proxy) goja.Value {
	if g.hasInstance == nil {
		ordinary, _ := goja.AssertFunction(g.proto("Function").GetSymbol(goja.SymHasInstance))
		g.hasInstance = g.native(func(this goja.Value, args []goja.Value) goja.Value {
			if o, ok := this.(*goja.Object); ok && g.targets[o] != nil {
				this = g.targets[o]
			}
			v, err := ordinary(this, args...)
			if err != nil {
				g.r.rethrow(err)
			}
			return v
		})
	}
	v := g.r.vm.ToValue(p)
	g.targets[v.(*goja.Object)] = target
	target.DefineDataPropertySymbol(goja.SymHasInstance, g.hasInstance, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	return v
}

// typedArrays are the typed-array constructors and their element sizes (ArrayBuffer: bytes).
var typedArrays = []struct {
	name string
	size int64
}{{"ArrayBuffer", 1}, {"Int8Array", 1}, {"Uint8Array", 1}, {"Uint8ClampedArray", 1}, {"Int16Array", 2},
	{"Uint16Array", 2}, {"Int32Array", 4}, {"Uint32Array", 4}, {"Float32Array", 4}, {"Float64Array", 8},
	{"BigInt64Array", 8}, {"BigUint64Array", 8}}

// typedArray builds the guarded typed-array constructor (or ArrayBuffer) from the builtin: a
// proxy that checks the length asked for — a number, or the length of the array-like or
// iterable to copy — in elements and in bytes before the buffer is allocated. from, of, species
// (slice, map, subarray) and prototype.constructor all construct through the proxy. A view on
// an existing buffer allocates nothing and is not checked.
func (g *guard) typedArray(size int64, isBuffer bool) func(goja.Value) goja.Value {
	return func(v goja.Value) goja.Value {
		target, ok := v.(*goja.Object)
		if !ok {
			return v
		}
		ctor, _ := goja.AssertConstructor(target)
		p := g.constructor(target, g.r.vm.NewProxy(target, &goja.ProxyTrapConfig{
			Construct: func(_ *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
				args = append([]goja.Value(nil), args...)
				if n := g.typedLength(args, isBuffer); n > 0 {
					if !isBuffer {
						g.elems(n)
					}
					g.bytes(mul(n, size))
				}
				o, err := ctor(newTarget, args...)
				if err != nil {
					g.r.rethrow(err)
				}
				return o
			},
		}))
		if proto, ok := target.Get("prototype").(*goja.Object); ok {
			proto.DefineDataProperty("constructor", p, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		}
		return p
	}
}

// typedLength is the element count a typed-array (or ArrayBuffer) construction asks for: its
// first argument as a number, or the length of an array-like to copy; 0 for a view on a buffer
// or a copy of a typed array (which exists already, so it was checked when made). A number
// given as an object is converted here, once, and handed to the builtin as the primitive, so
// its valueOf cannot answer differently to the check and to the allocation.
func (g *guard) typedLength(args []goja.Value, isBuffer bool) int64 {
	if len(args) == 0 {
		return 0
	}
	o, ok := args[0].(*goja.Object)
	if ok && !isBuffer {
		if t := o.ExportType(); t != nil && (t == arrayBufferType || t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Interface) {
			return 0
		}
		return lengthOf(o)
	}
	num := args[0].ToNumber()
	args[0] = num
	n := num.ToFloat()
	if math.IsNaN(n) || n <= 0 {
		return 0
	}
	return int64(min(n, math.MaxInt64))
}

var arrayBufferType = reflect.TypeOf(goja.ArrayBuffer{})

// argList checks the array-like argument i spread into an arguments list in one native step:
// Function.prototype.apply, Reflect.apply and Reflect.construct copy every element of a
// {length: 1e9} before the callee runs.
func (g *guard) argList(i int) func(c goja.FunctionCall) goja.FunctionCall {
	return func(c goja.FunctionCall) goja.FunctionCall {
		g.elems(lengthOf(c.Argument(i)))
		return c
	}
}

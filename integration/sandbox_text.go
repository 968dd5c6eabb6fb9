package integration

import (
	"strings"

	"github.com/dop251/goja"
)

// guardStrings wraps the string builtins whose result a script sizes with a number or
// multiplies by a count of matches: repeat, padStart/padEnd, concat, replace/replaceAll (a
// replacement with $' or $& repeats the whole string per match), split and iteration (one array
// element per character), the regexp protocol methods they delegate to, and Object.keys and its
// kin on strings (one key per character).
func (g *guard) guardStrings() {
	vm := g.r.vm
	proto := g.proto("String")
	g.wrap(proto, "repeat", func(c goja.FunctionCall) goja.FunctionCall {
		n := g.thisString(&c)
		count := g.number(&c, 0)
		if n > 0 && count > 0 {
			g.bytes(mul(n, int64(min(count, 1<<62))))
		}
		return c
	})
	pad := func(c goja.FunctionCall) goja.FunctionCall {
		g.thisString(&c)
		if l := g.number(&c, 0); l > 0 {
			g.bytes(int64(min(l, 1<<62)))
		}
		return c
	}
	g.wrap(proto, "padStart", pad)
	g.wrap(proto, "padEnd", pad)
	g.wrap(proto, "concat", func(c goja.FunctionCall) goja.FunctionCall {
		n := g.thisString(&c)
		c.Arguments = append([]goja.Value(nil), c.Arguments...)
		for i, a := range c.Arguments {
			s := a.ToString()
			c.Arguments[i] = s
			n = add(n, strLen(s))
		}
		g.bytes(n)
		return c
	})
	g.wrap(proto, "replace", g.replaceSize(false))
	g.wrap(proto, "replaceAll", g.replaceSize(true))
	g.wrap(proto, "split", g.splitSize)
	g.wrap(proto, "matchAll", func(c goja.FunctionCall) goja.FunctionCall {
		// A string pattern becomes a global regexp of the intrinsic RegExp: one match per character
		// at most, collected at once by a spread.
		if o, ok := c.Argument(0).(*goja.Object); !ok || o.GetSymbol(goja.SymMatchAll) == nil {
			g.elems(add(g.thisString(&c), 1))
		}
		return c
	})
	g.wrap(proto, goja.SymIterator, func(c goja.FunctionCall) goja.FunctionCall {
		g.elems(g.thisString(&c))
		return c
	})

	re := g.proto("RegExp")
	g.wrap(re, goja.SymReplace, func(c goja.FunctionCall) goja.FunctionCall {
		n := g.argString(&c, 0)
		occ := int64(1)
		if g.global(c.This) {
			occ = n + 1
		}
		g.replacement(&c, 1, n, occ)
		return c
	})
	perChar := func(c goja.FunctionCall) goja.FunctionCall {
		g.elems(add(g.argString(&c, 0), 1))
		return c
	}
	g.wrap(re, goja.SymSplit, perChar)
	g.wrap(re, goja.SymMatchAll, perChar)
	g.wrap(re, goja.SymMatch, func(c goja.FunctionCall) goja.FunctionCall {
		if n := g.argString(&c, 0); g.global(c.This) {
			g.elems(add(n, 1))
		}
		return c
	})

	object := vm.Get("Object").ToObject(vm)
	for _, name := range []string{"keys", "values", "entries", "getOwnPropertyNames"} {
		g.wrap(object, name, func(c goja.FunctionCall) goja.FunctionCall {
			if s, ok := c.Argument(0).(goja.String); ok {
				g.elems(int64(s.Length()))
			} else if o, ok := c.Argument(0).(*goja.Object); ok && o.ClassName() == "String" {
				g.elems(lengthOf(o))
			}
			return c
		})
	}
}

// thisString converts a string method's receiver to a primitive string once, hands that to the
// builtin (so a receiver's toString runs once, and cannot answer differently to the check and
// to the builtin), and returns its length. null and undefined are left for the builtin's
// TypeError.
func (g *guard) thisString(c *goja.FunctionCall) int64 {
	if c.This == nil || goja.IsUndefined(c.This) || goja.IsNull(c.This) {
		return 0
	}
	s := c.This.ToString()
	c.This = s
	return strLen(s)
}

// argString converts argument i to a primitive string once, as thisString does.
func (g *guard) argString(c *goja.FunctionCall, i int) int64 {
	c.Arguments = append([]goja.Value(nil), c.Arguments...)
	for len(c.Arguments) <= i {
		c.Arguments = append(c.Arguments, goja.Undefined())
	}
	s := c.Arguments[i].ToString()
	c.Arguments[i] = s
	return strLen(s)
}

// number converts argument i to a primitive number once and returns it as a float.
func (g *guard) number(c *goja.FunctionCall, i int) float64 {
	if len(c.Arguments) <= i {
		return 0
	}
	c.Arguments = append([]goja.Value(nil), c.Arguments...)
	n := c.Arguments[i].ToNumber()
	c.Arguments[i] = n
	return n.ToFloat()
}

// global reports a regexp's g flag as its protocol methods read it.
func (g *guard) global(re goja.Value) bool {
	o, ok := re.(*goja.Object)
	if !ok {
		return false
	}
	v := o.Get("global")
	return v != nil && v.ToBoolean()
}

// replaceSize checks String.prototype.replace/replaceAll with a string pattern: a regexp (any
// object with Symbol.replace) is delegated by the builtin to its own, checked, method.
func (g *guard) replaceSize(all bool) func(c goja.FunctionCall) goja.FunctionCall {
	return func(c goja.FunctionCall) goja.FunctionCall {
		if o, ok := c.Argument(0).(*goja.Object); ok && o.GetSymbol(goja.SymReplace) != nil {
			return c
		}
		n := g.thisString(&c)
		if c.This == nil || goja.IsUndefined(c.This) || goja.IsNull(c.This) {
			return c
		}
		g.argString(&c, 0)
		s, pat := c.This.String(), c.Arguments[0].String()
		occ := int64(0)
		switch {
		case !strings.Contains(s, pat):
		case !all:
			occ = 1
		case pat == "":
			occ = n + 1
		default:
			occ = int64(strings.Count(s, pat))
		}
		g.replacement(&c, 1, n, occ)
		return c
	}
}

// replacement checks a replace's result: the string (n units) with occ replacements. A string
// replacement's $ patterns insert at most the whole string each; a function's results are
// counted as it returns them (it is script code, called once per match, and the builtin joins
// all of its results in one step at the end).
func (g *guard) replacement(c *goja.FunctionCall, i int, n, occ int64) {
	if len(c.Arguments) <= i {
		c.Arguments = append(c.Arguments, goja.Undefined())
	}
	if fn, ok := goja.AssertFunction(c.Arguments[i]); ok {
		total := n
		c.Arguments[i] = g.r.vm.ToValue(func(call goja.FunctionCall) goja.Value {
			v, err := fn(call.This, call.Arguments...)
			if err != nil {
				g.r.rethrow(err)
			}
			s := v.ToString()
			total = add(total, strLen(s))
			g.bytes(total)
			return s
		})
		return
	}
	repl := c.Arguments[i].ToString()
	c.Arguments[i] = repl
	per := add(strLen(repl), mul(int64(strings.Count(repl.String(), "$")), n))
	g.bytes(add(n, mul(occ, per)))
}

// splitSize checks String.prototype.split with a string separator (a regexp's split is checked
// as Symbol.split): one element per separator found, or per character for "", capped by limit.
func (g *guard) splitSize(c goja.FunctionCall) goja.FunctionCall {
	if o, ok := c.Argument(0).(*goja.Object); ok && o.GetSymbol(goja.SymSplit) != nil {
		return c
	}
	n := g.thisString(&c)
	if c.This == nil || goja.IsUndefined(c.This) || goja.IsNull(c.This) || goja.IsUndefined(c.Argument(0)) {
		return c
	}
	g.argString(&c, 0)
	sep := c.Arguments[0].String()
	parts := n
	if sep != "" {
		parts = int64(strings.Count(c.This.String(), sep)) + 1
	}
	if lim := c.Argument(1); !goja.IsUndefined(lim) {
		parts = min(parts, int64(uint32(lim.ToInteger())))
	}
	g.elems(parts)
	return c
}

package integration

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dop251/goja"
)

// codesLib is the codes library of one run (wire-integration §8): the system's code maps, each
// loaded once per run (one snapshot), so saves are live on the next run.
type codesLib struct {
	s        *Service
	r        *run
	systemID string
	maps     map[string]*loadedCodeMap
}

type loadedCodeMap struct {
	m  *CodeMap
	ix *CodeIndex
}

func (c *codesLib) install() error {
	o := c.r.vm.NewObject()
	o.Set("toExternal", func(call goja.FunctionCall) goja.Value { return c.translate(call, true) })
	o.Set("toCanonical", func(call goja.FunctionCall) goja.Value { return c.translate(call, false) })
	o.Set("entries", func(codeSet string) goja.Value {
		m := c.load(codeSet)
		raw, _ := json.Marshal(m.m.Entries)
		return c.r.fromJSON(raw)
	})
	return c.r.set("codes", o)
}

// load returns the enabled code map of codeSet: missing or disabled is 2627 (kind config), one
// whose entries no longer index is 2629.
func (c *codesLib) load(codeSet string) *loadedCodeMap {
	if m, ok := c.maps[codeSet]; ok {
		return m
	}
	var m CodeMap
	err := c.s.db.NewSelect().Model(&m).Where("system_id = ? AND code_set = ?", c.systemID, codeSet).Limit(1).Scan(c.r.ctx)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err == nil && !m.IsEnabled:
		c.r.rethrow(&kindError{kind: KindConfig, err: ErrMissingCodeMap.WithArgs("codeSet", codeSet)})
	case err != nil:
		c.r.rethrow(&transportError{err: err})
	}
	ix, err := BuildCodeIndex(m.Entries)
	if err != nil {
		c.r.rethrow(&kindError{kind: KindConfig, err: err})
	}
	lm := &loadedCodeMap{m: &m, ix: ix}
	c.maps[codeSet] = lm
	return lm
}

// translate is toExternal / toCanonical(codeSet, value, opts?). The options are checked before
// the lookup: at most one object with exactly one of fallback, passthrough: true, reject: true.
func (c *codesLib) translate(call goja.FunctionCall, toExternal bool) goja.Value {
	vm := c.r.vm
	codeSet := call.Argument(0).String()
	value := call.Argument(1)
	policy, fallback := c.options(call.Arguments)
	if goja.IsUndefined(value) || goja.IsNull(value) {
		return value
	}
	m := c.load(codeSet)
	raw, err := c.r.toJSON(value)
	if err != nil {
		panic(vm.NewTypeError(err.Error()))
	}
	key, err := NormalizeCode(raw)
	if err != nil {
		panic(vm.NewTypeError("codes: " + err.Error()))
	}
	side, other := m.ix.ToExternal, func(e CodeMapEntry) json.RawMessage { return e.External }
	if !toExternal {
		side, other = m.ix.ToCanonical, func(e CodeMapEntry) json.RawMessage { return e.Canonical }
	}
	if i, ok := side[key]; ok {
		return c.r.fromJSON(other(m.m.Entries[i]))
	}
	if policy == "" {
		policy = m.m.OnUnmapped
		if toExternal {
			fallback = m.m.FallbackExternal
		} else {
			fallback = m.m.FallbackCanonical
		}
	}
	switch policy {
	case UnmappedPassthrough:
		return value
	case UnmappedFallback:
		return c.r.fromJSON(fallback)
	}
	c.r.rethrow(&kindError{kind: KindScript, err: ErrUnmappedValue.WithArgs("codeSet", codeSet, "value", key)})
	return nil
}

func (c *codesLib) options(args []goja.Value) (string, json.RawMessage) {
	vm := c.r.vm
	if len(args) <= 2 || goja.IsUndefined(args[2]) {
		if len(args) > 3 {
			panic(vm.NewTypeError("codes: at most one options object"))
		}
		return "", nil
	}
	if len(args) > 3 {
		panic(vm.NewTypeError("codes: at most one options object"))
	}
	o, ok := args[2].(*goja.Object)
	if !ok || goja.IsNull(args[2]) {
		panic(vm.NewTypeError("codes: options must be an object"))
	}
	keys := o.Keys()
	if len(keys) != 1 {
		panic(vm.NewTypeError("codes: options need exactly one of fallback, passthrough, reject"))
	}
	switch keys[0] {
	case "fallback":
		raw, err := c.r.toJSON(o.Get("fallback"))
		if err != nil {
			panic(vm.NewTypeError(err.Error()))
		}
		return UnmappedFallback, raw
	case "passthrough", "reject":
		if v := o.Get(keys[0]); !v.StrictEquals(vm.ToValue(true)) {
			panic(vm.NewTypeError(fmt.Sprintf("codes: %s must be true", keys[0])))
		}
		return keys[0], nil
	}
	panic(vm.NewTypeError("codes: unknown option " + keys[0]))
}

// newCodesLib returns the codes library of a system for one run.
func (s *Service) newCodesLib(_ context.Context, r *run, systemID string) *codesLib {
	return &codesLib{s: s, r: r, systemID: systemID, maps: map[string]*loadedCodeMap{}}
}

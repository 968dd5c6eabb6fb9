package rpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"
)

// paramsPlan is how an operation's params are decoded, fixed when Handle declares it: nothing is
// looked up by reflection per request beyond the decoding itself.
type paramsPlan struct {
	// useNumber: the params can reach an interface value, where encoding/json needs UseNumber so
	// ids above 2^53 keep their digits (numbersNeedCare); typed targets parse their digits
	// exactly either way.
	useNumber bool
}

// planParams returns the plan for params of type t.
func planParams(t reflect.Type) paramsPlan {
	return paramsPlan{useNumber: numbersNeedCare(t)}
}

// decodeParams decodes raw params into p. Absent, empty or null params leave p at its zero value
// (spec §2.1: params may be omitted). Params with invalid UTF-8 or a NUL character are refused
// first (checkParamText, 400/1400). Untyped numbers decode as json.Number so ids above 2^53
// keep their digits; unknown keys are ignored (wire-core §1.3). The result is json.Unmarshal's
// whichever way plan decodes.
func decodeParams[P any](raw json.RawMessage, p *P, plan paramsPlan) error {
	if _, none := any(p).(*NoParams); none {
		return nil
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if err := checkParamText(raw); err != nil {
		return err
	}
	if err := decodeJSON(raw, p, plan.useNumber); err != nil {
		return ErrInvalidRequestParams.Wrap(err)
	}
	return nil
}

// maxPooledParams: params up to this size are decoded by a pooled decoder, larger ones by a fresh
// one, so a pooled decoder's buffer stays small.
const maxPooledParams = 4 << 10

// paramDecoder is a json.Decoder reading from a bytes.Reader that is pointed at each request's
// params in turn. json.Unmarshal allocates its decoding state, the scanner's stack and the
// field-name stack of its error context on every call (three of a small call's allocations);
// a Decoder owns and reuses them. The result is the same: params are one complete JSON object
// (the envelope checked the whole body), which a Decoder reads to its closing brace without
// looking past it, and decodes with the same code as Unmarshal.
type paramDecoder struct {
	src bytes.Reader
	dec *json.Decoder
}

// paramDecoders holds decoders without and with UseNumber.
var paramDecoders = [2]sync.Pool{
	{New: func() any { return newParamDecoder(false) }},
	{New: func() any { return newParamDecoder(true) }},
}

func newParamDecoder(useNumber bool) *paramDecoder {
	d := new(paramDecoder)
	d.dec = json.NewDecoder(&d.src)
	if useNumber {
		d.dec.UseNumber()
	}
	return d
}

// decodeJSON decodes the single JSON value raw into v.
func decodeJSON(raw []byte, v any, useNumber bool) error {
	if len(raw) > maxPooledParams {
		d := newParamDecoder(useNumber)
		d.src.Reset(raw)
		return d.dec.Decode(v)
	}
	pool := &paramDecoders[0]
	if useNumber {
		pool = &paramDecoders[1]
	}
	d := pool.Get().(*paramDecoder)
	d.src.Reset(raw)
	start := d.dec.InputOffset()
	err := d.dec.Decode(v)
	// Only a decoder that consumed exactly raw, without error, is known to be clean: an error may
	// leave it mid-value (and a syntax error sticks to it).
	if err == nil && d.src.Len() == 0 && d.dec.InputOffset()-start == int64(len(raw)) {
		d.src.Reset(nil)
		pool.Put(d)
	}
	return err
}

// numbersNeedCare reports whether decoding into t can store a JSON number in an interface value
// (any, map[string]any, []any, …), the only place where encoding/json would turn it into a
// float64. Types with their own UnmarshalJSON are walked too, conservatively. It runs once per
// operation, when Handle declares it, never per request.
func numbersNeedCare(t reflect.Type) bool {
	return reachesInterface(t, map[reflect.Type]bool{})
}

func reachesInterface(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return reachesInterface(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if (f.IsExported() || f.Anonymous) && reachesInterface(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

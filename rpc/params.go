package rpc

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// decodeParams decodes raw params into p. Absent, empty or null params leave p at its zero value
// (spec §2.1: params may be omitted). Untyped numbers decode as json.Number so ids above 2^53
// keep their digits; unknown keys are ignored (wire-core §1.3).
//
// useNumber is fixed per operation at declaration (numbersNeedCare): only a decode that can reach
// an interface value needs a json.Decoder with UseNumber; typed targets parse their digits
// exactly either way and take the cheaper json.Unmarshal.
func decodeParams[P any](raw json.RawMessage, p *P, useNumber bool) error {
	if _, none := any(p).(*NoParams); none {
		return nil
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var err error
	if useNumber {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		err = dec.Decode(p)
	} else {
		err = json.Unmarshal(raw, p)
	}
	if err != nil {
		return ErrInvalidRequestParams.Wrap(err)
	}
	return nil
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

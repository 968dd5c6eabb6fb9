package consoletypes

import (
	"reflect"
	"slices"
	"strings"
)

// field is one JSON property of a struct, as encoding/json finds it.
type field struct {
	name     string
	typ      reflect.Type
	index    []int // the path of field indexes from the outer struct, for the encoder's order
	tagged   bool  // the name comes from a json tag
	optional bool  // omitempty/omitzero, or reached through an embedded pointer
	quoted   bool  // the ",string" option on a scalar
}

// fields lists t's JSON properties in encoding order, resolving embedded structs by
// encoding/json's rules: an untagged embedded struct (or pointer to one) lends its fields; among
// fields of one name the shallowest wins, then the only tagged one at that depth, else none.
func fields(t reflect.Type) []field {
	type level struct {
		typ      reflect.Type
		index    []int
		optional bool
	}
	var found []field
	depthOf := map[string]int{}
	visited := map[reflect.Type]bool{}
	next := []level{{typ: t}}
	for depth := 0; len(next) > 0; depth++ {
		current := next
		next = nil
		for _, lv := range current {
			if visited[lv.typ] {
				continue
			}
			visited[lv.typ] = true
			for i := range lv.typ.NumField() {
				sf := lv.typ.Field(i)
				ft := sf.Type
				if sf.Anonymous {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(slices.Clone(lv.index), i)
				if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct {
					next = append(next, level{typ: ft, index: index, optional: lv.optional || sf.Type.Kind() == reflect.Pointer})
					continue
				}
				f := field{name: name, typ: sf.Type, index: index, tagged: name != "", optional: lv.optional}
				if f.name == "" {
					f.name = sf.Name
				}
				for _, o := range strings.Split(opts, ",") {
					switch o {
					case "omitempty", "omitzero":
						f.optional = true
					case "string":
						f.quoted = quotable(sf.Type)
					}
				}
				if d, ok := depthOf[f.name]; !ok || d == depth {
					depthOf[f.name] = depth
					found = append(found, f)
				}
			}
		}
	}
	return dominant(found)
}

// dominant keeps, for each name, the shallowest field, or the only tagged one among equally
// shallow ones; a name with several equally good fields is dropped (encoding/json's rule). The
// result is in encoding order (by index path).
func dominant(found []field) []field {
	byName := map[string][]field{}
	for _, f := range found {
		byName[f.name] = append(byName[f.name], f)
	}
	var out []field
	for _, fs := range byName {
		best := fs[:0:0]
		for _, f := range fs {
			switch {
			case len(best) == 0 || len(f.index) < len(best[0].index):
				best = []field{f}
			case len(f.index) == len(best[0].index):
				best = append(best, f)
			}
		}
		if len(best) > 1 {
			var tagged []field
			for _, f := range best {
				if f.tagged {
					tagged = append(tagged, f)
				}
			}
			best = tagged
		}
		if len(best) == 1 {
			out = append(out, best[0])
		}
	}
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out
}

// quotable tells whether the ",string" option applies to t: strings, numbers and booleans
// (also behind one pointer).
func quotable(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

package consoletypes

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// known are the types whose JSON encoding the generator does not derive.
var known = map[reflect.Type]string{
	reflect.TypeFor[time.Time]():       "string",
	reflect.TypeFor[json.RawMessage](): "unknown",
	reflect.TypeFor[json.Number]():     "number",
}

// reserved are names a declaration must not take: the generated file's own and the global
// types it or the console refers to.
var reserved = map[string]bool{
	"Input": true, "Ops": true, "OpName": true, "Record": true, "Array": true, "Partial": true,
	"Date": true, "Error": true, "Map": true, "Set": true, "Promise": true, "Object": true,
	"String": true, "Number": true, "Boolean": true, "Function": true, "Symbol": true, "File": true,
	"Blob": true, "Event": true, "Node": true, "Element": true, "Request": true, "Response": true,
	"Headers": true, "Document": true, "Window": true, "Location": true, "Storage": true,
	"Text": true, "Range": true, "Selection": true, "Notification": true, "Comment": true,
}

// generator holds the named types found so far and their TypeScript names.
type generator struct {
	known map[reflect.Type]string // known and Options.Types
	named map[reflect.Type]string // declared type → its TypeScript name ("" until assignNames)
	order []reflect.Type          // declared types, in the order they were found
	errs  []error
	bad   map[reflect.Type]bool // types already reported
}

func newGenerator(types map[reflect.Type]string) *generator {
	g := &generator{known: maps.Clone(known), named: map[reflect.Type]string{}, bad: map[reflect.Type]bool{}}
	maps.Copy(g.known, types)
	return g
}

// fail records that t has no TypeScript rendering, once per type.
func (g *generator) fail(t reflect.Type, why string) {
	if !g.bad[t] {
		g.bad[t] = true
		g.errs = append(g.errs, fmt.Errorf("consoletypes: %s: %s", t, why))
	}
}

// declared tells whether t gets a declaration of its own: a named type that is not a
// predeclared one and that the generator does not render as a scalar.
func (g *generator) declared(t reflect.Type) bool {
	if t.Name() == "" || t.PkgPath() == "" {
		return false
	}
	if _, ok := g.known[t]; ok {
		return false
	}
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		return false
	}
	return !marshals(t) && !isText(t)
}

func marshals(t reflect.Type) bool {
	return t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)
}

func isText(t reflect.Type) bool {
	return t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)
}

// collect finds the named types t reaches.
func (g *generator) collect(t reflect.Type) {
	if t == nil {
		return
	}
	if g.declared(t) {
		if _, ok := g.named[t]; ok {
			return
		}
		g.named[t] = ""
		g.order = append(g.order, t)
	} else if t.Name() != "" && t.PkgPath() != "" && t.Kind() != reflect.Pointer {
		return // rendered as a scalar (known, Marshaler, TextMarshaler) or unknown
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		g.collect(t.Elem())
	case reflect.Map:
		g.collect(t.Elem())
	case reflect.Struct:
		for _, f := range fields(t) {
			g.collect(f.typ)
		}
	}
}

// assignNames gives each declared type its Go name; types that would share a name (or take a
// reserved one) get their package's name as a prefix.
func (g *generator) assignNames() {
	byName := map[string][]reflect.Type{}
	for _, t := range g.order {
		n := baseName(t)
		byName[n] = append(byName[n], t)
	}
	taken := map[string]bool{}
	for n, ts := range byName {
		if len(ts) == 1 && !reserved[n] {
			g.named[ts[0]] = n
			taken[n] = true
		}
	}
	for n, ts := range byName {
		if len(ts) == 1 && !reserved[n] {
			continue
		}
		slices.SortFunc(ts, func(a, b reflect.Type) int { return cmp.Compare(a.PkgPath(), b.PkgPath()) })
		for _, t := range ts {
			name := exported(pkgName(t.PkgPath())) + n
			for i := 2; taken[name]; i++ {
				name = exported(pkgName(t.PkgPath())) + n + strconv.Itoa(i)
			}
			g.named[t] = name
			taken[name] = true
		}
	}
	slices.SortStableFunc(g.order, func(a, b reflect.Type) int { return cmp.Compare(g.named[a], g.named[b]) })
}

// baseName is t's Go name as a TypeScript identifier: a generic instantiation Page[pkg.Item]
// is Page_Item.
func baseName(t reflect.Type) string {
	name := t.Name()
	open := strings.IndexByte(name, '[')
	if open < 0 {
		return exported(name)
	}
	var b strings.Builder
	b.WriteString(exported(name[:open]))
	for _, arg := range splitArgs(name[open+1 : len(name)-1]) {
		b.WriteByte('_')
		arg = strings.ReplaceAll(arg, "[]", "List")
		arg = strings.TrimLeft(arg, "*")
		if i := strings.LastIndexByte(arg, '/'); i >= 0 {
			arg = arg[i+1:]
		}
		if i := strings.LastIndexByte(arg, '.'); i >= 0 {
			arg = arg[i+1:]
		}
		b.WriteString(exported(strings.Map(identRune, arg)))
	}
	return b.String()
}

// splitArgs splits a type argument list at its top-level commas.
func splitArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

func identRune(r rune) rune {
	if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
		return r
	}
	return -1
}

func pkgName(path string) string { return path[strings.LastIndexByte(path, '/')+1:] }

func exported(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// declare writes the declaration of the named type t.
func (g *generator) declare(out *bytes.Buffer, t reflect.Type) {
	fmt.Fprintf(out, "/** Go: %s.%s */\n", pkgName(t.PkgPath()), t.Name())
	if t.Kind() == reflect.Struct && len(fields(t)) > 0 {
		fmt.Fprintf(out, "export interface %s %s\n\n", g.named[t], g.object(t, "\n", "  "))
		return
	}
	fmt.Fprintf(out, "export type %s = %s;\n\n", g.named[t], g.structural(t))
}

// expr is the TypeScript type of a value of type t.
func (g *generator) expr(t reflect.Type) string {
	if ts, ok := g.known[t]; ok {
		return ts
	}
	if name, ok := g.named[t]; ok && name != "" {
		return name
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		if marshals(t) {
			return g.marshaled(t)
		}
		if isText(t) {
			return "string"
		}
	}
	return g.structural(t)
}

// marshaled is the TypeScript type of a json.Marshaler, read from what its zero value encodes
// to; only scalars are recognized.
func (g *generator) marshaled(t reflect.Type) string {
	v := reflect.New(t) // *t implements Marshaler whether the method is on t or *t
	b, err := v.Interface().(json.Marshaler).MarshalJSON()
	if err != nil || len(b) == 0 {
		g.fail(t, "its MarshalJSON fails on the zero value; give it in Options.Types")
		return "unknown"
	}
	switch b[0] {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "number"
	}
	g.fail(t, fmt.Sprintf("its MarshalJSON encodes the zero value as %.20s; give it in Options.Types", b))
	return "unknown"
}

// structural is the TypeScript type of t by its kind.
func (g *generator) structural(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Interface:
		return "unknown"
	case reflect.Pointer:
		return nullable(g.expr(t.Elem()))
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !marshals(t.Elem()) && !isText(t.Elem()) {
			return "string" // base64
		}
		return list(g.expr(t.Elem()))
	case reflect.Array:
		return list(g.expr(t.Elem()))
	case reflect.Map:
		switch k := t.Key(); {
		case k.Kind() == reflect.String, isText(k),
			k.Kind() >= reflect.Int && k.Kind() <= reflect.Uintptr:
			return "Record<string, " + g.expr(t.Elem()) + ">"
		}
		g.fail(t, "encoding/json cannot encode its key type")
		return "unknown"
	case reflect.Struct:
		return g.object(t, " ", "")
	}
	g.fail(t, "encoding/json cannot encode a "+t.Kind().String())
	return "unknown"
}

// object renders a struct's fields between braces, each on its own line (sep "\n", indent)
// or inline (sep " ").
func (g *generator) object(t reflect.Type, sep, indent string) string {
	fs := fields(t)
	if len(fs) == 0 {
		return "Record<string, never>" // encodes as {}
	}
	var b strings.Builder
	b.WriteString("{" + sep)
	for _, f := range fs {
		b.WriteString(indent + g.field(f) + ";" + sep)
	}
	b.WriteString("}")
	return b.String()
}

// field renders one property: optional when encoding/json may leave it out, its pointer then
// never null.
func (g *generator) field(f field) string {
	t := f.typ
	name := quoteProp(f.name)
	if f.optional {
		name += "?"
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	ts := ""
	if f.quoted {
		ts = "string"
		if t.Kind() == reflect.Pointer {
			ts = "string | null"
		}
	} else {
		ts = g.expr(t)
	}
	return name + ": " + ts
}

func nullable(ts string) string {
	if strings.HasSuffix(ts, " | null") || ts == "unknown" {
		return ts
	}
	return ts + " | null"
}

func list(ts string) string {
	if strings.Contains(ts, " | ") {
		return "(" + ts + ")[]"
	}
	return ts + "[]"
}

// quote is s as a TypeScript string literal.
func quote(s string) string { return strconv.Quote(s) }

// quoteProp is a property name: bare when it is an identifier, else quoted.
func quoteProp(s string) string {
	for i, r := range s {
		if !(r == '_' || r == '$' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

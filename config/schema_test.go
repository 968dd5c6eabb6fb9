package config

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// schemaKeys lists every key of the schema, map entries written <name> and list-of-table fields
// written [] ("svc.data_sources.<name>.type", "svc.event.routing[].pattern"). A field that
// nests its own type (svc.security.menus[].children) is listed once, as a key of its own.
func schemaKeys() []string {
	var keys []string
	open := map[reflect.Type]bool{}
	var walk func(t reflect.Type, key string)
	walk = func(t reflect.Type, key string) {
		switch {
		case t == durationType || t == sizeType || open[t]:
			keys = append(keys, key)
		case t.Kind() == reflect.Struct:
			open[t] = true
			for name, i := range tomlFields(t) {
				walk(t.Field(i).Type, key+"."+name)
			}
			delete(open, t)
		case t.Kind() == reflect.Map:
			walk(t.Elem(), key+".<name>")
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct && open[t.Elem()]:
			keys = append(keys, key)
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
			walk(t.Elem(), key+"[]")
		default:
			keys = append(keys, key)
		}
	}
	walk(reflect.TypeFor[Config](), "svc")
	sort.Strings(keys)
	return keys
}

// TestDocsListEveryKey keeps docs/configuration.md consistent with the code: every key of the
// schema appears in it, written in full.
func TestDocsListEveryKey(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range schemaKeys() {
		if !strings.Contains(string(doc), "`"+key+"`") {
			t.Errorf("docs/configuration.md does not list `%s`", key)
		}
	}
}

// TestFieldsDocumented: every struct field carries a toml tag, so the schema, the environment
// rule and Redacted see it.
func TestFieldsTagged(t *testing.T) {
	t.Parallel()
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Map || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.IsExported() && f.Tag.Get("toml") == "" {
				t.Errorf("%s.%s has no toml tag", typ.Name(), f.Name)
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[Config]())
}

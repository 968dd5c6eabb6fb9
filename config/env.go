package config

import (
	"reflect"
	"strings"
)

// Environment overrides (spec/README.md): every scalar key, and every list of scalars, can be
// set as SVC_ + its path without the svc. prefix, upper-cased, with every character other than
// A–Z, 0–9 and _ turned into _ (svc.app.port → SVC_APP_PORT, svc.data_sources.primary.password →
// SVC_DATA_SOURCES_PRIMARY_PASSWORD). Lists are comma-separated. Empty values are ignored, so an
// unset ${VAR} in a container definition does not clear a file value.
//
// Map entries: the map key is part of the path. A variable can change an entry the file has,
// and it can create only the well-known entries below (the lookup function cannot enumerate
// the environment, and names such as read_replica would be ambiguous once joined with _).
// svc.event.routing (a list of tables) is not settable from the environment.

// envCreatable are the map entries the environment may create when the file lacks them.
var envCreatable = map[string][]string{
	"data_sources":           {PrimaryDataSource},
	"security.ip_whitelists": {DefaultIPWhitelist},
}

// EnvName returns the environment variable that overrides a key, given with or without the
// svc. prefix: EnvName("svc.app.port") is "SVC_APP_PORT".
func EnvName(key string) string {
	return envName(strings.Split(strings.TrimPrefix(key, "svc."), "."))
}

func envName(path []string) string {
	var b strings.Builder
	b.WriteString("SVC")
	for _, seg := range path {
		b.WriteByte('_')
		for _, r := range strings.ToUpper(seg) {
			if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
	}
	return b.String()
}

// envOverlay writes the environment's values into the svc table of the file.
type envOverlay struct {
	root   map[string]any
	lookup func(string) (string, bool)
}

// applyEnv overlays the environment on root (the [svc] table) following Config's shape.
func applyEnv(root map[string]any, lookup func(string) (string, bool)) {
	o := envOverlay{root: root, lookup: lookup}
	o.walk(reflect.TypeFor[Config](), nil)
}

func (o envOverlay) walk(t reflect.Type, path []string) {
	switch {
	case t == durationType || t == sizeType:
		o.leaf(path)
	case t.Kind() == reflect.Struct:
		for name, i := range tomlFields(t) {
			o.walk(t.Field(i).Type, append(path[:len(path):len(path)], name))
		}
	case t.Kind() == reflect.Map:
		for _, k := range o.mapKeys(path) {
			o.walk(t.Elem(), append(path[:len(path):len(path)], k))
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		// Lists of tables (svc.event.routing) come from the file only.
	default:
		o.leaf(path)
	}
}

// leaf sets one key from its variable when that is set and not blank.
func (o envOverlay) leaf(path []string) {
	name := envName(path)
	v, ok := o.lookup(name)
	if !ok || strings.TrimSpace(v) == "" {
		return
	}
	node := o.root
	for _, seg := range path[:len(path)-1] {
		next, exists := node[seg]
		if !exists {
			m := map[string]any{}
			node[seg] = m
			node = m
			continue
		}
		m, isTable := next.(map[string]any)
		if !isTable {
			return // the file has a non-table here; the decoder reports it
		}
		node = m
	}
	node[path[len(path)-1]] = envValue{name: name, value: v}
}

// mapKeys returns the entries of the map at path that variables may address: those in the file,
// then the creatable well-known ones the file lacks (compared by variable name, so a file entry
// "Primary" is not duplicated by "primary").
func (o envOverlay) mapKeys(path []string) []string {
	var keys []string
	seen := map[string]bool{}
	if m, ok := o.lookupTable(path); ok {
		for _, k := range sortedKeys(m) {
			keys = append(keys, k)
			seen[envName([]string{k})] = true
		}
	}
	for _, k := range envCreatable[strings.Join(path, ".")] {
		if !seen[envName([]string{k})] {
			keys = append(keys, k)
		}
	}
	return keys
}

// lookupTable returns the table at path, if the file (or an earlier override) has one.
func (o envOverlay) lookupTable(path []string) (map[string]any, bool) {
	node := o.root
	for _, seg := range path {
		m, ok := node[seg].(map[string]any)
		if !ok {
			return nil, false
		}
		node = m
	}
	return node, true
}

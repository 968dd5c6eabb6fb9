package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// The decoder turns the generic map of the TOML file (after environment overrides) into the
// typed sections. It runs once at startup, so reflection is fine here; it understands the toml
// tags of the sections, durations, sizes, range-checked integers, *bool, maps and slices, and it
// collects every problem instead of stopping at the first.

var (
	durationType = reflect.TypeFor[time.Duration]()
	sizeType     = reflect.TypeFor[Size]()
)

// envValue is a value that came from an environment variable: always a string, parsed into the
// key's type (unlike file values, which must already have the right TOML type).
type envValue struct {
	name  string // the variable, e.g. SVC_APP_PORT
	value string
}

type decoder struct {
	warnings []string
	errs     []error
}

// fail records a type or range error naming the key (and the variable for environment values).
func (d *decoder) fail(key string, raw any, format string, args ...any) {
	if ev, ok := raw.(envValue); ok {
		key += " (from " + ev.name + ")"
	}
	d.errs = append(d.errs, fmt.Errorf("%s: %w: %s", key, ErrInvalidValue, fmt.Sprintf(format, args...)))
}

// tomlFields maps the toml tag names of t's exported fields to their index; "-" is skipped.
func tomlFields(t reflect.Type) map[string]int {
	fields := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("toml")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		fields[name] = i
	}
	return fields
}

// decodeStruct decodes table m into struct v; keys without a field are warned about.
func (d *decoder) decodeStruct(key string, m map[string]any, v reflect.Value) {
	fields := tomlFields(v.Type())
	for _, k := range sortedKeys(m) {
		i, ok := fields[k]
		if !ok {
			d.warnings = append(d.warnings, "unknown key "+key+"."+k)
			continue
		}
		d.decode(key+"."+k, m[k], v.Field(i))
	}
}

// decode stores raw into v, which has the type of the key's field.
func (d *decoder) decode(key string, raw any, v reflect.Value) {
	switch v.Type() {
	case durationType:
		d.duration(key, raw, v)
		return
	case sizeType:
		d.size(key, raw, v)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		m, ok := raw.(map[string]any)
		if !ok {
			d.fail(key, raw, "want a table, got %s", describe(raw))
			return
		}
		d.decodeStruct(key, m, v)
	case reflect.Map:
		d.decodeMap(key, raw, v)
	case reflect.Slice:
		d.decodeSlice(key, raw, v)
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		n := len(d.errs)
		d.decode(key, raw, elem.Elem())
		if len(d.errs) == n {
			v.Set(elem)
		}
	case reflect.String:
		if s, ok := text(raw); ok {
			v.SetString(s)
			return
		}
		d.fail(key, raw, "want a string, got %s", describe(raw))
	case reflect.Bool:
		d.boolean(key, raw, v)
	case reflect.Interface:
		d.anyValue(key, raw, v)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		d.integer(key, raw, v)
	case reflect.Float32, reflect.Float64:
		d.float(key, raw, v)
	default:
		d.fail(key, raw, "unsupported field type %s", v.Type())
	}
}

// anyValue stores a free-form value (a field of type any, such as a menu's meta map) as the TOML
// file gives it; from the environment it is the variable's string.
func (d *decoder) anyValue(key string, raw any, v reflect.Value) {
	if v.NumMethod() != 0 {
		d.fail(key, raw, "unsupported field type %s", v.Type())
		return
	}
	if ev, ok := raw.(envValue); ok {
		raw = ev.value
	}
	if raw != nil {
		v.Set(reflect.ValueOf(raw))
	}
}

func (d *decoder) decodeMap(key string, raw any, v reflect.Value) {
	m, ok := raw.(map[string]any)
	if !ok {
		d.fail(key, raw, "want a table, got %s", describe(raw))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(v.Type(), len(m)))
	}
	for _, k := range sortedKeys(m) {
		elem := reflect.New(v.Type().Elem()).Elem()
		if old := v.MapIndex(reflect.ValueOf(k)); old.IsValid() {
			elem.Set(old)
		}
		d.decode(key+"."+k, m[k], elem)
		v.SetMapIndex(reflect.ValueOf(k), elem)
	}
}

// decodeSlice accepts a TOML array, or from the environment a comma-separated list (items are
// trimmed, empty items dropped).
func (d *decoder) decodeSlice(key string, raw any, v reflect.Value) {
	var items []any
	switch r := raw.(type) {
	case []any:
		items = r
	case []map[string]any:
		for _, m := range r {
			items = append(items, m)
		}
	case envValue:
		for _, s := range strings.Split(r.value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, envValue{name: r.name, value: s})
			}
		}
	default:
		d.fail(key, raw, "want an array, got %s", describe(raw))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, item := range items {
		d.decode(fmt.Sprintf("%s[%d]", key, i), item, out.Index(i))
	}
	v.Set(out)
}

func (d *decoder) boolean(key string, raw any, v reflect.Value) {
	switch r := raw.(type) {
	case bool:
		v.SetBool(r)
		return
	case envValue:
		switch strings.ToLower(strings.TrimSpace(r.value)) {
		case "1", "t", "true", "on", "yes":
			v.SetBool(true)
			return
		case "0", "f", "false", "off", "no":
			v.SetBool(false)
			return
		}
	}
	d.fail(key, raw, "want a boolean, got %s", describe(raw))
}

// float stores a TOML float or integer, or an environment number (svc.tracing.sample_ratio).
func (d *decoder) float(key string, raw any, v reflect.Value) {
	switch r := raw.(type) {
	case float64:
		v.SetFloat(r)
	case int64:
		v.SetFloat(float64(r))
	case envValue:
		f, err := strconv.ParseFloat(strings.TrimSpace(r.value), 64)
		if err != nil {
			d.fail(key, raw, "want a number, got %q", r.value)
			return
		}
		v.SetFloat(f)
	default:
		d.fail(key, raw, "want a number, got %s", describe(raw))
	}
}

// integer stores a TOML integer or an environment number, checking it fits the field's type.
func (d *decoder) integer(key string, raw any, v reflect.Value) {
	var n int64
	switch r := raw.(type) {
	case int64:
		n = r
	case envValue:
		var err error
		if n, err = strconv.ParseInt(strings.TrimSpace(r.value), 10, 64); err != nil {
			d.fail(key, raw, "want an integer, got %q", r.value)
			return
		}
	default:
		d.fail(key, raw, "want an integer, got %s", describe(raw))
		return
	}
	if v.CanUint() {
		if n < 0 || v.OverflowUint(uint64(n)) {
			d.fail(key, raw, "%d out of range for %s", n, v.Type())
			return
		}
		v.SetUint(uint64(n))
		return
	}
	if v.OverflowInt(n) {
		d.fail(key, raw, "%d out of range for %s", n, v.Type())
		return
	}
	v.SetInt(n)
}

// duration accepts a duration string ("30s", "5m", "24h", "90d", "1d12h") or the integer 0.
func (d *decoder) duration(key string, raw any, v reflect.Value) {
	if n, ok := raw.(int64); ok && n == 0 {
		v.SetInt(0)
		return
	}
	s, ok := text(raw)
	if !ok {
		d.fail(key, raw, "want a duration string such as \"30s\", \"5m\", \"24h\" or \"90d\", got %s", describe(raw))
		return
	}
	dur, err := ParseDuration(s)
	if err != nil {
		d.fail(key, raw, "%v", err)
		return
	}
	v.SetInt(int64(dur))
}

// size accepts a size string ("512", "10kb", "32mib") or a non-negative integer of bytes.
func (d *decoder) size(key string, raw any, v reflect.Value) {
	if n, ok := raw.(int64); ok {
		if n < 0 {
			d.fail(key, raw, "negative size %d", n)
			return
		}
		v.SetInt(n)
		return
	}
	s, ok := text(raw)
	if !ok {
		d.fail(key, raw, "want a size such as 1048576 or \"32mib\", got %s", describe(raw))
		return
	}
	sz, err := ParseSize(s)
	if err != nil {
		d.fail(key, raw, "%v", err)
		return
	}
	v.SetInt(int64(sz))
}

// text returns raw as a string when it is a TOML string or an environment value.
func text(raw any) (string, bool) {
	switch r := raw.(type) {
	case string:
		return r, true
	case envValue:
		return r.value, true
	}
	return "", false
}

// describe names the TOML type of raw for messages. String contents are quoted only for
// non-string fields, which never hold secrets.
func describe(raw any) string {
	switch r := raw.(type) {
	case string:
		return strconv.Quote(r)
	case envValue:
		return strconv.Quote(r.value)
	case int64:
		return "integer " + strconv.FormatInt(r, 10)
	case float64:
		return "float " + strconv.FormatFloat(r, 'g', -1, 64)
	case bool:
		return "boolean " + strconv.FormatBool(r)
	case map[string]any:
		return "a table"
	case []any, []map[string]any:
		return "an array"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("a %T", raw)
}

// ParseDuration parses a Go duration ("30s", "5m", "1h30m", "24h") with one extension: a
// leading whole number of days ("90d", "1d12h", "-2d"). Days are 24 hours.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexByte(t, 'd')
	if i < 0 {
		d, err := time.ParseDuration(t)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q (want forms such as 30s, 5m, 24h, 90d)", s)
		}
		return d, nil
	}
	days, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || t[:i] == "" || strings.HasPrefix(t[:i], "+") {
		return 0, fmt.Errorf("invalid duration %q (want forms such as 30s, 5m, 24h, 90d)", s)
	}
	if days > int64(1<<63-1)/int64(Day) || days < -int64(1<<63-1)/int64(Day) {
		return 0, fmt.Errorf("duration %q overflows", s)
	}
	total := time.Duration(days) * Day
	if rest := t[i+1:]; rest != "" {
		r, err := time.ParseDuration(rest)
		if err != nil || strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
			return 0, fmt.Errorf("invalid duration %q (want forms such as 30s, 5m, 24h, 90d)", s)
		}
		if strings.HasPrefix(t, "-") {
			r = -r
		}
		if (r > 0 && total > time.Duration(1<<63-1)-r) || (r < 0 && total < time.Duration(-1<<63)-r) {
			return 0, fmt.Errorf("duration %q overflows", s)
		}
		total += r
	}
	return total, nil
}

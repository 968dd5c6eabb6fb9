package config

import (
	"reflect"
	"strings"
	"time"
)

// RedactedValue replaces every non-empty secret in Redacted.
const RedactedValue = "<redacted>"

// Redacted returns the effective configuration as nested maps keyed like the file, rooted at
// "svc", for `svc config check`: durations as strings ("5m", "168h"), sizes as strings ("32mib"),
// enumerations as strings, an unset tri-state omitted, and every field tagged secret:"true"
// (passwords, svc.security.secret, api key values, body-encoding and integration keys, object
// store credentials, trust-login app secrets) replaced by RedactedValue when non-empty. The
// result marshals to TOML or JSON as is.
func (c *Config) Redacted() map[string]any {
	return map[string]any{"svc": redact(reflect.ValueOf(*c), false)}
}

func redact(v reflect.Value, secret bool) any {
	switch v.Type() {
	case durationType:
		return formatDuration(time.Duration(v.Int()))
	case sizeType:
		return Size(v.Int()).String()
	}
	switch v.Kind() {
	case reflect.Struct:
		out := map[string]any{}
		for name, i := range tomlFields(v.Type()) {
			f := v.Type().Field(i)
			if val := redact(v.Field(i), f.Tag.Get("secret") == "true"); val != nil {
				out[name] = val
			}
		}
		return out
	case reflect.Map:
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			out[it.Key().String()] = redact(it.Value(), secret)
		}
		return out
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = redact(v.Index(i), secret)
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return redact(v.Elem(), secret)
	case reflect.String:
		if secret && v.Len() > 0 {
			return RedactedValue
		}
		return v.String()
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(v.Uint())
	}
	return nil
}

// formatDuration renders d as time.Duration.String without zero trailing units: 5m, 168h, 1h30m.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

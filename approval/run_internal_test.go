package approval

import (
	"context"
	"reflect"
	"testing"
)

// TestRunKeepsNoContext: a run carries no context.Context in any field, directly or inside a
// struct it holds (CONVENTIONS: ctx is a parameter, never stored) — its methods take the
// command's ctx, whose batching scope decides where their writes go.
func TestRunKeepsNoContext(t *testing.T) {
	t.Parallel()
	ctxType := reflect.TypeOf((*context.Context)(nil)).Elem()
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		if typ.Kind() != reflect.Struct || typ.PkgPath() != reflect.TypeOf(run{}).PkgPath() {
			return // only this package's structs are the run's own state
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Type == ctxType || f.Type.Implements(ctxType) {
				t.Errorf("%s.%s is a %s: pass ctx to the run's methods instead", path, f.Name, f.Type)
			}
			walk(path+"."+f.Name, f.Type)
		}
	}
	walk("run", reflect.TypeOf(run{}))
}

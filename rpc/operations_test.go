package rpc

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOperations lists registered operations in order with their access rules, params and result
// types.
func TestOperations(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{}, Resource{Name: "b/things", Ops: []Op{
		Handle("read", echo, RequiredPermission("b.things.read"), Audit()),
		Handle("read", echo, Version("v2")),
		Handle("upload", echo, HTTPOnly()),
	}}, Resource{Name: "a", Ops: []Op{Handle("login", echo, Public())}})
	got := e.Operations()
	want := []OperationInfo{
		{Resource: "a", Action: "login", Version: "v1", Public: true, Strategy: StrategyNone, Params: reflect.TypeFor[echoParams](), Result: reflect.TypeFor[echoResult]()},
		{Resource: "b/things", Action: "read", Version: "v1", Permission: "b.things.read", Strategy: StrategyBearer, Audit: true,
			Params: reflect.TypeFor[echoParams](), Result: reflect.TypeFor[echoResult]()},
		{Resource: "b/things", Action: "read", Version: "v2", Strategy: StrategyBearer, Params: reflect.TypeFor[echoParams](), Result: reflect.TypeFor[echoResult]()},
		{Resource: "b/things", Action: "upload", Version: "v1", Strategy: StrategyBearer, HTTPOnly: true,
			Params: reflect.TypeFor[echoParams](), Result: reflect.TypeFor[echoResult]()},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b reflect.Type) bool { return a == b })); diff != "" {
		t.Errorf("Operations() mismatch (-want +got):\n%s", diff)
	}
	if e.DefaultStrategy() != StrategyBearer {
		t.Errorf("DefaultStrategy() = %q, want bearer", e.DefaultStrategy())
	}
}

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRegisterValidation(t *testing.T) {
	t.Parallel()
	ok := Handle("find_page", echo)
	with := func(mod func(*Op)) Op {
		op := ok
		mod(&op)
		return op
	}
	tests := []struct {
		name    string
		res     Resource
		wantErr string // substring; "" means success
	}{
		{"valid", Resource{Name: "sys/storage_file/x1", Ops: []Op{ok}}, ""},
		{"no ops", Resource{Name: "sys/monitor"}, ""},
		{"empty version defaults to v1", Resource{Name: "a", Ops: []Op{with(func(o *Op) { o.Version = "" })}}, ""},
		{"permission token", Resource{Name: "a", Ops: []Op{with(func(o *Op) { o.Permission = "cron.schedule.Manage_2" })}}, ""},
		{"uppercase resource", Resource{Name: "Sys/storage", Ops: []Op{ok}}, "resource name"},
		{"dash in resource", Resource{Name: "sys/my-storage", Ops: []Op{ok}}, "resource name"},
		{"trailing slash", Resource{Name: "sys/", Ops: []Op{ok}}, "resource name"},
		{"empty resource", Resource{Name: "", Ops: []Op{ok}}, "resource name"},
		{"double underscore", Resource{Name: "sys__x", Ops: []Op{ok}}, "resource name"},
		{"camel action", Resource{Name: "a", Ops: []Op{Handle("findPage", echo)}}, "not snake_case"},
		{"empty action", Resource{Name: "a", Ops: []Op{Handle("", echo)}}, "not snake_case"},
		{"version v0", Resource{Name: "a", Ops: []Op{Handle("x", echo, Version("v0"))}}, "version"},
		{"version 1", Resource{Name: "a", Ops: []Op{Handle("x", echo, Version("1"))}}, "version"},
		{"version v1.1", Resource{Name: "a", Ops: []Op{Handle("x", echo, Version("v1.1"))}}, "version"},
		{"bad permission", Resource{Name: "a", Ops: []Op{Handle("x", echo, RequiredPermission("sys:storage:upload"))}}, "permission"},
		{"permission with empty segment", Resource{Name: "a", Ops: []Op{Handle("x", echo, RequiredPermission("a..b"))}}, "permission"},
		{"public with permission", Resource{Name: "a", Ops: []Op{Handle("x", echo, Public(), RequiredPermission("a.b"))}}, "public operation cannot require"},
		{"public with strategy", Resource{Name: "a", Ops: []Op{Handle("x", echo, Public(), Auth("api_key"))}}, "public operation cannot use"},
		{"nil invoke", Resource{Name: "a", Ops: []Op{{Action: "x", Version: "v1"}}}, "no Invoke"},
		{"negative timeout", Resource{Name: "a", Ops: []Op{Handle("x", echo, Timeout(-time.Second))}}, "negative timeout"},
		{"duplicate in resource", Resource{Name: "a", Ops: []Op{ok, ok}}, "declared twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := NewEngine(EngineConfig{})
			if err != nil {
				t.Fatal(err)
			}
			err = e.Register(tt.res)
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("Register = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidRegistration) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Register = %v, want ErrInvalidRegistration containing %q", err, tt.wantErr)
			}
			if len(e.routes) != 0 {
				t.Errorf("a failed Register left %d routes", len(e.routes))
			}
		})
	}
}

func TestRegisterDuplicateAcrossCalls(t *testing.T) {
	t.Parallel()
	e, err := NewEngine(EngineConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Register(Resource{Name: "a", Ops: []Op{Handle("x", echo)}}); err != nil {
		t.Fatal(err)
	}
	err = e.Register(Resource{Name: "b", Ops: []Op{Handle("y", echo)}}, Resource{Name: "a", Ops: []Op{Handle("x", echo)}})
	if !errors.Is(err, ErrInvalidRegistration) || !strings.Contains(err.Error(), "a x v1 declared twice") {
		t.Errorf("Register = %v, want a duplicate error", err)
	}
	if len(e.routes) != 1 {
		t.Errorf("routes = %d, want 1 (the failed batch registers nothing)", len(e.routes))
	}
	// The same action under another version or resource is not a duplicate.
	if err := e.Register(Resource{Name: "a", Ops: []Op{Handle("x", echo, Version("v2"))}}, Resource{Name: "b", Ops: []Op{Handle("x", echo)}}); err != nil {
		t.Errorf("Register = %v, want nil", err)
	}
}

func TestRegisterJoinsAllProblems(t *testing.T) {
	t.Parallel()
	e, err := NewEngine(EngineConfig{})
	if err != nil {
		t.Fatal(err)
	}
	err = e.Register(Resource{Name: "A"}, Resource{Name: "b", Ops: []Op{Handle("X", echo), Handle("y", echo, Version("x"))}})
	for _, want := range []string{`"A"`, `"X"`, `"x"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Register = %v, want it to name %s", err, want)
		}
	}
}

func TestNewEngineBodyEncodingConfig(t *testing.T) {
	t.Parallel()
	key := func(n int) []byte { return make([]byte, n) }
	tests := []struct {
		name string
		enc  BodyEncoding
		want error
	}{
		{"disabled ignores everything", BodyEncoding{Encoding: "rot13"}, nil},
		{"aes default encoding", BodyEncoding{Enabled: true, Key: key(16)}, nil},
		{"aes-192", BodyEncoding{Enabled: true, Encoding: EncodingAESGCM, Key: key(24)}, nil},
		{"aes-256", BodyEncoding{Enabled: true, Encoding: EncodingAESGCM, Key: key(32)}, nil},
		{"sm4", BodyEncoding{Enabled: true, Encoding: EncodingSM4GCM, Key: key(16)}, nil},
		{"aes 20 bytes", BodyEncoding{Enabled: true, Encoding: EncodingAESGCM, Key: key(20)}, ErrInvalidBodyEncodingKey},
		{"sm4 32 bytes", BodyEncoding{Enabled: true, Encoding: EncodingSM4GCM, Key: key(32)}, ErrInvalidBodyEncodingKey},
		{"missing key", BodyEncoding{Enabled: true, Encoding: EncodingSM4GCM}, ErrMissingBodyEncodingKey},
		{"unknown encoding", BodyEncoding{Enabled: true, Encoding: "base64", Key: key(16)}, ErrInvalidBodyEncoding},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewEngine(EngineConfig{BodyEncoding: tt.enc})
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Errorf("NewEngine = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestNoParamsIgnoresParams(t *testing.T) {
	t.Parallel()
	called := false
	e := newEngine(t, EngineConfig{}, Resource{Name: "a", Ops: []Op{
		Handle("x", func(context.Context, Call, NoParams) (json.RawMessage, error) {
			called = true
			return json.RawMessage(`{"ok":true}`), nil
		}, Public()),
	}})
	res := serve(t, e, post(envelopeJSON("a", "x", "v1", `{"anything":[1,2]}`)))
	if !called || string(res.Data) != `{"ok":true}` {
		t.Errorf("called = %v, data = %s", called, res.Data)
	}
}

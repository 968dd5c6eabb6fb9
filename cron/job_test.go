package cron

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func noop(context.Context, Execution) error { return nil }

func TestNewRegistry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		handlers []JobHandler
		want     error
	}{
		{"empty name", []JobHandler{Job("", noop)}, ErrJobNameEmpty},
		{"duplicate", []JobHandler{Job("a", noop), Job("a", noop)}, ErrJobDuplicate},
		{"too long", []JobHandler{Job(strings.Repeat("é", 129), noop)}, ErrJobNameTooLong},
		{"nil", []JobHandler{nil}, ErrJobNil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := NewRegistry(tt.handlers...); !errors.Is(err, tt.want) {
				t.Errorf("NewRegistry error = %v, want %v", err, tt.want)
			}
		})
	}
	r, err := NewRegistry(Job("zeta", noop), Job(strings.Repeat("é", 128), noop), Job("alpha", noop))
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	if diff := cmp.Diff([]string{"alpha", "zeta", strings.Repeat("é", 128)}, r.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if r.Get("alpha") == nil || r.Get("missing") != nil {
		t.Errorf("Get(alpha) = %v, Get(missing) = %v; want a handler and nil", r.Get("alpha"), r.Get("missing"))
	}
}

func TestTypedJob(t *testing.T) {
	t.Parallel()
	type params struct {
		Target string `json:"target"`
		Count  int    `json:"count"`
	}
	tests := []struct {
		name       string
		params     string
		wantCalled bool
		want       params
		wantErr    bool
	}{
		{name: "decoded", params: `{"target":"x","count":3}`, wantCalled: true, want: params{"x", 3}},
		{name: "absent params give zero value", params: ``, wantCalled: true},
		{name: "null params give zero value", params: `null`, wantCalled: true},
		{name: "decode failure does not call the handler", params: `{"count":"three"}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var called bool
			var got params
			h := TypedJob("typed", func(_ context.Context, _ Execution, p params) error {
				called, got = true, p
				return nil
			})
			err := h.Execute(context.Background(), Execution{JobName: "typed", Params: json.RawMessage(tt.params)})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Execute error = %v, wantErr %v", err, tt.wantErr)
			}
			if called != tt.wantCalled {
				t.Errorf("called = %v, want %v", called, tt.wantCalled)
			}
			if got != tt.want {
				t.Errorf("params = %+v, want %+v", got, tt.want)
			}
		})
	}
}

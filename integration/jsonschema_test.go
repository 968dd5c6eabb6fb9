package integration_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// TestSchemaExternalRefsRefused is the attack of issue #31 item 5: a contract schema whose
// $ref (or $schema) points outside itself is refused at create and update with 2615, no file
// is read and no URL fetched, and the answer for an existing file is the answer for a missing
// one with the path swapped. References inside the schema and the drafts' metaschemas compile.
func TestSchemaExternalRefsRefused(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"type":"string","title":"TOP-SECRET-CONTENT"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(plain, []byte("Zfirst byte"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	var hits atomic.Int64
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	t.Cleanup(web.Close)

	srv := newServer(t, config.SQLite)
	id := create(t, srv, contractR, map[string]any{"code": "refs", "name": "refs"})
	refused := []struct {
		name   string
		schema map[string]any
		target string // the address as given, swapped for a placeholder before comparing answers
	}{
		{"file existing JSON", refSchema("file://" + secret), "file://" + secret},
		{"file existing non-JSON", refSchema("file://" + plain), "file://" + plain},
		{"file missing", refSchema("file://" + missing), "file://" + missing},
		{"file fragment", refSchema("file://" + secret + "#/title"), "file://" + secret},
		{"absolute path", refSchema(secret), secret},
		{"relative", refSchema("secret.json"), "secret.json"},
		{"parent relative", refSchema("../../" + secret), secret},
		{"http", refSchema(web.URL + "/s.json"), web.URL + "/s.json"},
		{"https", refSchema("https://example.invalid/s.json"), "https://example.invalid/s.json"},
		{"urn", refSchema("urn:example:secret"), "urn:example:secret"},
		{"$schema file", map[string]any{"$schema": "file://" + secret, "type": "object"}, "file://" + secret},
		{"$schema http", map[string]any{"$schema": web.URL + "/meta.json", "type": "object"}, web.URL + "/meta.json"},
		{"$defs ref to file", map[string]any{"$ref": "#/$defs/a", "$defs": map[string]any{"a": map[string]any{"$ref": "file://" + secret}}}, "file://" + secret},
	}
	shapes := map[string]string{}
	for _, tt := range refused {
		for _, action := range []string{"create", "update"} {
			t.Run(tt.name+"/"+action, func(t *testing.T) {
				field := "inputSchema"
				if action == "update" {
					field = "outputSchema"
				}
				params := map[string]any{"code": "refs2", "name": "refs", field: tt.schema}
				if action == "update" {
					params["id"], params["code"] = id, "refs"
				}
				r := srv.Call(t, contractR, action, params, svctest.As(admin))
				if r.Code != integrationCode("InvalidSchema") {
					t.Fatalf("code = %d (%s), want %d", r.Code, r.Message, integrationCode("InvalidSchema"))
				}
				for _, leak := range []string{"TOP-SECRET", "Zfirst", "'Z'", "no such file", "invalid character"} {
					if strings.Contains(r.Message, leak) {
						t.Errorf("message %q reveals %q", r.Message, leak)
					}
				}
				if !strings.Contains(r.Message, "outside the schema") {
					t.Errorf("message %q does not say the reference is outside the schema", r.Message)
				}
				shapes[tt.name+"/"+action] = strings.ReplaceAll(r.Message, tt.target, "<ref>")
			})
		}
	}
	for _, action := range []string{"create", "update"} {
		want := shapes["file missing/"+action]
		for _, name := range []string{"file existing JSON", "file existing non-JSON"} {
			if got := shapes[name+"/"+action]; got != want {
				t.Errorf("%s %s answers %q, a missing file %q: existence shows", name, action, got, want)
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the schema server was fetched %d times, want 0", n)
	}

	allowed := []map[string]any{
		{"$ref": "#/$defs/id", "$defs": map[string]any{"id": map[string]any{"type": "string"}}},
		{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": map[string]any{"a": map[string]any{"type": "string"}},
			"properties": map[string]any{"x": map[string]any{"$ref": "#/definitions/a"}}},
		{"$id": "urn:example:self", "$defs": map[string]any{"a": map[string]any{"type": "string"}}, "$ref": "urn:example:self#/$defs/a"},
	}
	for i, sch := range allowed {
		r := srv.Call(t, contractR, "update", map[string]any{"id": id, "code": "refs", "name": "refs", "inputSchema": sch}, svctest.As(admin))
		if r.Code != 0 {
			t.Errorf("allowed schema %d: code = %d (%s), want 0", i, r.Code, r.Message)
		}
	}
}

func refSchema(ref string) map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"$ref": ref}}}
}

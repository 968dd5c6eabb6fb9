package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemasCheckRefusesExternalRef: a schema already stored (written before the loader was
// closed, or straight into the table) with a file: reference fails the run-time check without
// reading the file, and an internal reference validates.
func TestSchemasCheckRefusesExternalRef(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(secret, []byte(`{"const":"TOP-SECRET"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newSchemas()
	err := c.check(json.RawMessage(`{"$ref":"file://`+secret+`"}`), json.RawMessage(`"x"`))
	if err == nil || strings.Contains(err.Error(), "TOP-SECRET") || !strings.Contains(err.Error(), "outside the schema") {
		t.Errorf("check(file ref) = %v, want a refusal that does not show the file", err)
	}
	internal := json.RawMessage(`{"$ref":"#/$defs/n","$defs":{"n":{"type":"number"}}}`)
	if err := c.check(internal, json.RawMessage(`1`)); err != nil {
		t.Errorf("check(internal ref, 1) = %v, want nil", err)
	}
	if err := c.check(internal, json.RawMessage(`"x"`)); err == nil {
		t.Error(`check(internal ref, "x") = nil, want a violation`)
	}
}

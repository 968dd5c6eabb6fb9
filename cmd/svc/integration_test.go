package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// TestIntegrationRotateKey runs `svc integration rotate-key`: a wrong --from changes nothing
// (exit 1), the right one re-encrypts every system so only the new key opens them.
func TestIntegrationRotateKey(t *testing.T) {
	t.Parallel()
	const oldKey, newKey = "MDEyMzQ1Njc4OWFiY2RlZg==", "ZmVkY2JhOTg3NjU0MzIxMA=="
	env := newCLIEnv(t, svctest.DataSource(t, config.SQLite), "")
	ctx := context.Background()
	if err := db.Migrate(ctx, env.db, *integration.Migrations()); err != nil {
		t.Fatal(err)
	}
	old, _ := integration.NewSecrets(oldKey, config.SecretAlgorithmAES)
	sys := &integration.System{Code: "HIS", Name: "h", IsEnabled: true,
		OutboundAuth: &integration.AuthConfig{Scheme: "bearer", Params: map[string]string{"token": old.Seal("tok")}}}
	sys.ID, sys.CreatedAt, sys.UpdatedAt = rpc.NewID(), crud.NewTime(time.Now()), crud.NewTime(time.Now())
	if _, err := env.db.NewInsert().Model(sys).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if res := env.run("", "integration", "rotate-key", "--from", newKey, "--to", oldKey); res.code != 1 || !strings.Contains(res.errOut, "nothing changed") {
		t.Errorf("wrong --from: exit %d, stderr %q; want 1 and nothing changed", res.code, res.errOut)
	}
	out := env.mustRun("", "integration", "rotate-key", "--from", oldKey, "--to", newKey, "--to-algorithm", "sm4")
	if !strings.Contains(out, "re-encrypted the secrets of 1 systems") {
		t.Errorf("stdout = %q", out)
	}
	var got integration.System
	if err := env.db.NewSelect().Model(&got).Where("code = 'HIS'").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	sm4, _ := integration.NewSecrets(newKey, config.SecretAlgorithmSM4)
	if vals, err := sm4.OpenSystem(&got); err != nil || len(vals) != 1 || vals[0] != "tok" {
		t.Errorf("new key opens %v, %v; want [tok]", vals, err)
	}
	if _, err := old.OpenSystem(&got); err == nil {
		t.Error("the old key still opens the rotated secret")
	}
}

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/rpc"
)

// Keys made up for the tests (standard base64).
const (
	key16 = "MDEyMzQ1Njc4OWFiY2RlZg==" // "0123456789abcdef"
	key32 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	keyB  = "ZmVkY2JhOTg3NjU0MzIxMA==" // "fedcba9876543210"
)

// Environment of the rotation child: the test binary re-executed by TestMain.
const (
	envRotateDS = "SVC_ITG_ROTATE_DS" // JSON config.DataSource
)

// TestMain runs the rotation child instead of the tests when TestRotateKeyKilled re-executes
// this test binary; the tests run with the script worker built (runWithWorker).
func TestMain(m *testing.M) {
	if ds := os.Getenv(envRotateDS); ds != "" {
		if err := rotateChild(ds); err != nil {
			fmt.Fprintln(os.Stderr, "rotate child:", err)
			os.Exit(2)
		}
	}
	os.Exit(runWithWorker(m))
}

// rotateChild rotates key16 → keyB and blocks forever after rewriting the second row, inside the
// transaction, until the parent kills it.
func rotateChild(raw string) error {
	var ds config.DataSource
	if err := json.Unmarshal([]byte(raw), &ds); err != nil {
		return err
	}
	ctx := context.Background()
	d, err := db.Open(ctx, config.PrimaryDataSource, ds)
	if err != nil {
		return err
	}
	from, _ := NewSecrets(key16, config.SecretAlgorithmAES)
	to, _ := NewSecrets(keyB, config.SecretAlgorithmAES)
	rotateHook = func(done int) {
		if done == 2 {
			fmt.Println("rotating")
			select {}
		}
	}
	_, err = RotateKey(ctx, d, from, to)
	return err
}

func mustSecrets(t *testing.T, key string, alg config.SecretAlgorithm) *Secrets {
	t.Helper()
	s, err := NewSecrets(key, alg)
	if err != nil {
		t.Fatalf("NewSecrets: %v", err)
	}
	return s
}

// TestSecretsRoundTrip: AES (16 and 32 bytes) and SM4 seal to "enc:" + base64 and open again; a
// wrong key, the other algorithm and a missing key fail; plaintext passes through.
func TestSecretsRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		key  string
		alg  config.SecretAlgorithm
	}{{"aes-128", key16, config.SecretAlgorithmAES}, {"aes-256", key32, config.SecretAlgorithmAES}, {"sm4", key16, config.SecretAlgorithmSM4}} {
		s := mustSecrets(t, tt.key, tt.alg)
		sealed := s.Seal("p@ss")
		if !strings.HasPrefix(sealed, "enc:") || strings.Contains(sealed, "p@ss") {
			t.Errorf("%s: Seal = %q, want enc: and no plaintext", tt.name, sealed)
		}
		if s.Seal(sealed) != sealed {
			t.Errorf("%s: a sealed value was sealed again", tt.name)
		}
		if got, err := s.Open(sealed); err != nil || got != "p@ss" {
			t.Errorf("%s: Open = %q, %v; want p@ss", tt.name, got, err)
		}
		if _, err := mustSecrets(t, keyB, tt.alg).Open(sealed); !errors.Is(err, ErrSecretUndecryptable) {
			t.Errorf("%s: wrong key: err = %v, want ErrSecretUndecryptable", tt.name, err)
		}
		if _, err := (&Secrets{}).Open(sealed); !errors.Is(err, ErrSecretKeyMissing) {
			t.Errorf("%s: no key: err = %v, want ErrSecretKeyMissing", tt.name, err)
		}
	}
	aes, sm4 := mustSecrets(t, key16, config.SecretAlgorithmAES), mustSecrets(t, key16, config.SecretAlgorithmSM4)
	if _, err := sm4.Open(aes.Seal("x")); !errors.Is(err, ErrSecretUndecryptable) {
		t.Errorf("SM4 opened an AES value: %v", err)
	}
	if got, _ := aes.Open("plain"); got != "plain" {
		t.Errorf("Open(plain) = %q, want plain (key-less values stay readable)", got)
	}
	if (&Secrets{}).Seal("x") != "x" {
		t.Error("no key: Seal changed the value")
	}
}

// TestSecretsStartupErrors: a malformed key, a key of the wrong size and an unknown algorithm
// are the named startup errors (spec §7).
func TestSecretsStartupErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		key  string
		alg  config.SecretAlgorithm
		want error
	}{
		{"not base64!", config.SecretAlgorithmAES, config.ErrInvalidIntegrationSecretKey},
		{key32, config.SecretAlgorithmSM4, config.ErrInvalidIntegrationSecretKey},
		{"MDEy", config.SecretAlgorithmAES, config.ErrInvalidIntegrationSecretKey},
		{key16, "des", config.ErrInvalidIntegrationSecretAlgorithm},
	} {
		if _, err := NewSecrets(tt.key, tt.alg); !errors.Is(err, tt.want) {
			t.Errorf("NewSecrets(%q, %q) = %v, want %v", tt.key, tt.alg, err, tt.want)
		}
	}
}

// seedSystems stores n systems with secrets sealed by s.
func seedSystems(t *testing.T, d *db.DB, s *Secrets, n int) {
	t.Helper()
	for i := range n {
		sys := &System{Code: fmt.Sprintf("S%d", i), Name: "s", IsEnabled: true,
			OutboundAuth: &AuthConfig{Scheme: "bearer", Params: map[string]string{"token": s.Seal(fmt.Sprintf("tok-%d", i))}},
			InboundAuth:  &AuthConfig{Scheme: "http_basic", Params: map[string]string{"username": "u", "password": s.Seal("pw")}},
			DataSource:   &DataSourceConfig{Kind: "mysql", Password: s.Seal("dbpw")}}
		sys.ID, sys.CreatedAt, sys.UpdatedAt, sys.CreatedBy, sys.UpdatedBy = rpc.NewID(), crud.NewTime(time.Now()), crud.NewTime(time.Now()), "t", "t"
		if _, err := d.NewInsert().Model(sys).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// openAll opens every system's secrets with s.
func openAll(t *testing.T, d *db.DB, s *Secrets) error {
	t.Helper()
	var rows []System
	if err := d.NewSelect().Model(&rows).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		vals, err := s.OpenSystem(&rows[i])
		if err != nil {
			return err
		}
		if len(vals) != 3 {
			t.Errorf("OpenSystem = %v, want three secrets", vals)
		}
	}
	return nil
}

func migratedDB(t *testing.T, kind config.DBKind) (*db.DB, config.DataSource) {
	t.Helper()
	ds := testservice.DataSource(t, kind)
	d, err := db.Open(context.Background(), config.PrimaryDataSource, ds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := db.Migrate(context.Background(), d, *Migrations()); err != nil {
		t.Fatal(err)
	}
	return d, ds
}

// TestRotateKey re-encrypts every row, AES → SM4 included; a wrong --from changes nothing.
func TestRotateKey(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		d, _ := migratedDB(t, kind)
		ctx := context.Background()
		oldKey, newKey := mustSecrets(t, key16, config.SecretAlgorithmAES), mustSecrets(t, keyB, config.SecretAlgorithmSM4)
		seedSystems(t, d, oldKey, 3)
		if _, err := RotateKey(ctx, d, newKey, oldKey); !errors.Is(err, ErrSecretUndecryptable) {
			t.Fatalf("rotate with the wrong from key: err = %v, want ErrSecretUndecryptable", err)
		}
		if err := openAll(t, d, oldKey); err != nil {
			t.Fatalf("after a failed rotation the old key no longer opens every row: %v", err)
		}
		n, err := RotateKey(ctx, d, oldKey, newKey)
		if err != nil || n != 3 {
			t.Fatalf("RotateKey = %d, %v; want 3 rows", n, err)
		}
		if err := openAll(t, d, newKey); err != nil {
			t.Errorf("the new key does not open every row: %v", err)
		}
		if err := openAll(t, d, oldKey); err == nil {
			t.Error("the old key still opens the rotated rows")
		}
	})
}

// TestRotateKeyKilled kills the rotating process (SIGKILL) after it rewrote two of four rows
// inside its transaction: afterwards every row still opens with the old key — all or none.
func TestRotateKeyKilled(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		d, ds := migratedDB(t, kind)
		oldKey := mustSecrets(t, key16, config.SecretAlgorithmAES)
		seedSystems(t, d, oldKey, 4)
		raw, _ := json.Marshal(ds)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = testservice.ChildEnv(envRotateDS + "=" + string(raw))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || strings.TrimSpace(line) != "rotating" {
			cmd.Process.Kill()
			t.Fatalf("child said %q, %v; want rotating", line, err)
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		testservice.Eventually(t, 30*time.Second, func() bool { return openAll(t, d, oldKey) == nil },
			"every row opens with the old key after the killed rotation")
	})
}

// eachKind runs fn per database kind (the svctest matrix, which this package cannot import).
func eachKind(t *testing.T, fn func(t *testing.T, kind config.DBKind)) {
	for _, kind := range []config.DBKind{config.SQLite, config.Postgres, config.MySQL} {
		t.Run(string(kind), func(t *testing.T) { fn(t, kind) })
	}
}

// TestSaveWithWrongKey: updating a system whose kept secrets were sealed with another key (or
// when the key is gone) answers 2617, the documented code of an undecryptable credential.
func TestSaveWithWrongKey(t *testing.T) {
	t.Parallel()
	stored := mustSecrets(t, key16, config.SecretAlgorithmAES)
	old := &System{Code: "S", Name: "s", OutboundAuth: &AuthConfig{Scheme: "bearer", Params: map[string]string{"token": stored.Seal("tok")}}}
	p := &SystemParams{Code: "S", Name: "s", OutboundAuth: &AuthConfig{Scheme: "bearer", Params: map[string]string{"token": MaskedSecret}}}
	for _, tt := range []struct {
		name    string
		secrets *Secrets
		want    int
	}{{"same key", stored, 0}, {"other key", mustSecrets(t, keyB, config.SecretAlgorithmAES), ErrCodeInvalidAuthParams},
		{"other algorithm", mustSecrets(t, key16, config.SecretAlgorithmSM4), ErrCodeInvalidAuthParams}, {"no key", &Secrets{}, ErrCodeInvalidAuthParams}} {
		svc := &Service{secrets: tt.secrets}
		svc.outAuth, svc.inAuth, _ = newSchemeSets(nil, nil)
		params := *p
		params.OutboundAuth = cloneAuth(p.OutboundAuth)
		_, err := svc.buildSystem(&params, old)
		code := 0
		if re, ok := rpc.AsError(err); ok {
			code = re.Code
		} else if err != nil {
			code = -1
		}
		if code != tt.want {
			t.Errorf("%s: err = %v, want code %d", tt.name, err, tt.want)
		}
	}
}

// TestReadKeyStatus: key_status counts each system's secrets as sealed with the configured key,
// plaintext or undecryptable, lists only systems with secrets, and says when a rotation is
// needed; on the three databases.
func TestReadKeyStatus(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		d, _ := migratedDB(t, kind)
		ctx := context.Background()
		current := mustSecrets(t, key16, config.SecretAlgorithmAES)
		seedSystems(t, d, current, 2) // S0, S1: three sealed secrets each
		insert := func(sys *System) {
			sys.ID, sys.CreatedAt, sys.UpdatedAt, sys.CreatedBy, sys.UpdatedBy = rpc.NewID(), crud.NewTime(time.Now()), crud.NewTime(time.Now()), "t", "t"
			if _, err := d.NewInsert().Model(sys).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		insert(&System{Code: "T0", Name: "none", OutboundAuth: &AuthConfig{Scheme: "http_basic", Params: map[string]string{"username": "u"}}})
		status := func(s *Secrets) *KeyStatus {
			t.Helper()
			st, err := ReadKeyStatus(ctx, d, s, outboundSchemes, inboundSchemes)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		st := status(current)
		if !st.Encrypted || st.RotationNeeded || len(st.Systems) != 2 || st.Systems[0] != (SystemKeyStatus{SystemCode: "S0", SystemName: "s", Sealed: 3}) {
			t.Errorf("all sealed: %+v", st)
		}
		// a value saved without a key, and one sealed with another key
		insert(&System{Code: "T1", Name: "mixed", OutboundAuth: &AuthConfig{Scheme: "header", Params: map[string]string{"x-key": "plain"}},
			DataSource: &DataSourceConfig{Kind: "mysql", Password: mustSecrets(t, keyB, config.SecretAlgorithmAES).Seal("pw")}})
		st = status(current)
		if !st.RotationNeeded || len(st.Systems) != 3 || st.Systems[2] != (SystemKeyStatus{SystemCode: "T1", SystemName: "mixed", Plaintext: 1, Undecryptable: 1}) {
			t.Errorf("mixed: %+v", st)
		}
		// without a key sealed values cannot be opened; plaintext ones are as expected
		st = status(&Secrets{})
		if st.Encrypted || !st.RotationNeeded || st.Systems[0].Undecryptable != 3 {
			t.Errorf("no key: %+v", st)
		}
	})
}

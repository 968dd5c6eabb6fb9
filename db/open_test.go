package db_test

import (
	"context"

	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/svctest"
	"github.com/uptrace/bun"
)

func TestOpen(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		ctx := t.Context()
		if d.Name != config.PrimaryDataSource {
			t.Errorf("Name = %q, want %q", d.Name, config.PrimaryDataSource)
		}
		if err := d.PingContext(ctx); err != nil {
			t.Fatalf("ping: %v", err)
		}
		var one int
		if err := d.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("SELECT 1 = %d, %v; want 1, nil", one, err)
		}
		for _, s := range sessionSettings(d) {
			var got string
			if err := d.QueryRowContext(ctx, s.query).Scan(&got); err != nil {
				t.Fatalf("%s: %v", s.query, err)
			}
			if got != s.want {
				t.Errorf("%s = %q, want %q", s.query, got, s.want)
			}
		}
	})
}

type setting struct{ query, want string }

// sessionSettings are the per-connection settings Open promises for each kind.
func sessionSettings(d *db.DB) []setting {
	switch d.Kind {
	case config.SQLite:
		return []setting{
			{"PRAGMA journal_mode", "wal"},
			{"PRAGMA foreign_keys", "1"},
			{"PRAGMA busy_timeout", "5000"},
		}
	case config.Postgres:
		return []setting{
			{"SELECT current_schema()", d.Schema},
			{"SHOW timezone", "UTC"},
		}
	default:
		return []setting{
			{"SELECT @@session.time_zone", "+00:00"},
			{"SELECT @@character_set_connection", "utf8mb4"},
		}
	}
}

func TestOpenSQLiteCreatesDirectory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a", "b", "svc.db")
	d, err := db.Open(t.Context(), "files", config.DataSource{Type: config.SQLite, Path: path})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer func() { _ = d.Close() }()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file: %v", err)
	}
	if d.Schema != "" {
		t.Errorf("Schema = %q, want empty for sqlite", d.Schema)
	}
}

func TestOpenUnsupportedKind(t *testing.T) {
	t.Parallel()
	for _, kind := range []config.DBKind{config.Oracle, config.SQLServer, "", "db2"} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			_, err := db.Open(t.Context(), "legacy", config.DataSource{Type: kind, Host: "127.0.0.1"})
			if !errors.Is(err, db.ErrUnsupportedDBKind) || !errors.Is(err, config.ErrUnsupportedDBKind) {
				t.Fatalf("Open(%q) error = %v, want ErrUnsupportedDBKind", kind, err)
			}
			if !strings.Contains(err.Error(), `"legacy"`) {
				t.Errorf("error %q does not name the data source", err)
			}
		})
	}
}

func TestOpenRejectsBadSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ds   config.DataSource
	}{
		{"sqlite without path", config.DataSource{Type: config.SQLite}},
		{"postgres ssl_mode", config.DataSource{Type: config.Postgres, Host: "127.0.0.1", SSLMode: "sometimes"}},
		{"mysql ssl_mode", config.DataSource{Type: config.MySQL, Host: "127.0.0.1", SSLMode: "sometimes"}},
		{"mysql missing root cert", config.DataSource{Type: config.MySQL, Host: "127.0.0.1", SSLMode: "verify-full", SSLRootCert: "/nonexistent/ca.pem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if d, err := db.Open(t.Context(), "bad", tt.ds); err == nil {
				_ = d.Close()
				t.Fatal("Open succeeded, want an error")
			}
		})
	}
}

// closedPort returns a local TCP port nothing listens on.
func closedPort(t *testing.T) uint16 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return uint16(port)
}

func TestOpenErrorHidesPassword(t *testing.T) {
	t.Parallel()
	const password = "s3cr3t/P@ss:w0rd?x"
	port := closedPort(t)
	tests := []struct {
		name string
		ds   func(t *testing.T) config.DataSource
	}{
		{"postgres unreachable", func(*testing.T) config.DataSource {
			return config.DataSource{Type: config.Postgres, Host: "127.0.0.1", Port: port, User: "svc", Password: password, Database: "svc"}
		}},
		{"mysql unreachable", func(*testing.T) config.DataSource {
			return config.DataSource{Type: config.MySQL, Host: "127.0.0.1", Port: port, User: "svc", Password: password, Database: "svc"}
		}},
		{"mysql wrong password", func(t *testing.T) config.DataSource {
			ds := svctest.DataSource(t, config.MySQL)
			ds.Password = password
			return ds
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := db.Open(t.Context(), "orders-db", tt.ds(t))
			if err == nil {
				_ = d.Close()
				t.Fatal("Open succeeded, want an error")
			}
			msg := err.Error()
			if !strings.Contains(msg, `"orders-db"`) {
				t.Errorf("error %q does not name the data source", msg)
			}
			for _, form := range []string{password, url.QueryEscape(password), url.PathEscape(password)} {
				if strings.Contains(msg, form) {
					t.Errorf("error %q contains the password", msg)
				}
			}
		})
	}
}

func TestOpenAll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sqlite := func(name string) config.DataSource {
		return config.DataSource{Type: config.SQLite, Path: filepath.Join(dir, name+".db")}
	}

	t.Run("opens every source", func(t *testing.T) {
		dbs, err := db.OpenAll(t.Context(), map[string]config.DataSource{
			config.PrimaryDataSource: sqlite("p"), "reports": sqlite("r"),
		})
		if err != nil {
			t.Fatalf("OpenAll: %v", err)
		}
		defer func() { _ = db.CloseAll(dbs) }()
		for _, name := range []string{config.PrimaryDataSource, "reports"} {
			if d := dbs[name]; d == nil || d.Name != name {
				t.Errorf("dbs[%q] = %v, want a database named %q", name, d, name)
			}
		}
	})

	t.Run("requires primary", func(t *testing.T) {
		_, err := db.OpenAll(t.Context(), map[string]config.DataSource{"reports": sqlite("r2")})
		if !errors.Is(err, config.ErrMissingPrimaryDataSource) {
			t.Fatalf("OpenAll error = %v, want ErrMissingPrimaryDataSource", err)
		}
	})

	t.Run("fails as a whole", func(t *testing.T) {
		dbs, err := db.OpenAll(t.Context(), map[string]config.DataSource{
			config.PrimaryDataSource: sqlite("p3"),
			"zz-broken":              {Type: config.Postgres, Host: "127.0.0.1", Port: closedPort(t), Database: "x"},
		})
		if err == nil || dbs != nil {
			t.Fatalf("OpenAll = %v, %v; want nil and an error", dbs, err)
		}
		if !strings.Contains(err.Error(), `"zz-broken"`) {
			t.Errorf("error %q does not name the failing source", err)
		}
	})
}

func TestOpenHonoursContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ds := config.DataSource{Type: config.Postgres, Host: "127.0.0.1", Port: closedPort(t), Database: "x"}
	if d, err := db.Open(ctx, "cancelled", ds); err == nil {
		_ = d.Close()
		t.Fatal("Open with a cancelled context succeeded")
	}
}

// TestServerPoolKeepsConnections: on the client/server engines every connection of the pool may
// stay idle, so a burst that used many of them gives them back to the pool instead of closing
// them (a PostgreSQL connection opened again is a new backend process rebuilding its caches).
func TestServerPoolKeepsConnections(t *testing.T) {
	for _, kind := range []config.DBKind{config.Postgres, config.MySQL} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			d := svctest.NewDB(t, kind)
			ctx := t.Context()
			const held = 20
			conns := make([]bun.Conn, held)
			for i := range conns {
				c, err := d.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				conns[i] = c
			}
			for _, c := range conns {
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
			}
			st := d.Stats()
			if st.MaxIdleClosed != 0 || st.Idle != held {
				t.Errorf("after %d connections were returned: %d idle, %d closed for the idle limit; want %d idle, none closed",
					held, st.Idle, st.MaxIdleClosed, held)
			}
		})
	}
}

package db

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/svc-framework/svc/config"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// SSL modes of svc.data_sources.<name>.ssl_mode (spec §8.3).
const (
	sslDisable    = "disable"
	sslRequire    = "require"
	sslVerifyCA   = "verify-ca"
	sslVerifyFull = "verify-full"
)

// SQLite settings: see doc.go for why each is chosen.
const (
	sqliteBusyTimeoutMS = 5000
	sqliteMaxOpenConns  = 8
)

// dialTimeout bounds establishing one network connection.
const dialTimeout = 10 * time.Second

func sslMode(ds config.DataSource) (string, error) {
	switch mode := string(ds.SSLMode); mode {
	case "":
		return sslDisable, nil
	case sslDisable, sslRequire, sslVerifyCA, sslVerifyFull:
		return mode, nil
	default:
		return "", fmt.Errorf("ssl_mode %q: want disable, require, verify-ca or verify-full", ds.SSLMode)
	}
}

func hostOr(host, fallback string) string {
	if host == "" {
		return fallback
	}
	return host
}

func portOr(port, fallback uint16) string {
	if port == 0 {
		port = fallback
	}
	return strconv.Itoa(int(port))
}

// postgresURL builds the pgx connection URL. Values go through net/url so that any character
// in the user, password or database name is escaped correctly.
func postgresURL(ds config.DataSource, schema string) (string, error) {
	mode, err := sslMode(ds)
	if err != nil {
		return "", err
	}
	host, port := hostOr(ds.Host, "127.0.0.1"), portOr(ds.Port, 5432)
	u := url.URL{Scheme: "postgres", Path: "/" + ds.Database}
	q := url.Values{}
	if strings.HasPrefix(host, "/") { // unix socket directory
		q.Set("host", host)
		q.Set("port", port)
	} else {
		u.Host = net.JoinHostPort(host, port)
	}
	switch {
	case ds.User != "" && ds.Password != "":
		u.User = url.UserPassword(ds.User, ds.Password)
	case ds.User != "":
		u.User = url.User(ds.User)
	}
	q.Set("sslmode", mode)
	if ds.SSLRootCert != "" {
		q.Set("sslrootcert", ds.SSLRootCert)
	}
	// Unknown keys become run-time parameters of the session: the quoted schema keeps its case,
	// and timezone makes now() and timestamptz text UTC (ARCHITECTURE: time in the database is UTC).
	q.Set("search_path", `"`+strings.ReplaceAll(schema, `"`, `""`)+`"`)
	q.Set("timezone", "UTC")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func openPostgres(ds config.DataSource, schema string) (*sql.DB, error) {
	dsn, err := postgresURL(ds, schema)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(dsn) // pgconn masks the password in its parse errors
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = dialTimeout
	// bun writes every value into the SQL text, so nearly every statement is new to pgx's
	// statement cache, and the default mode (cache statement) would prepare each one: a
	// Parse/Describe round trip before the execution, and a server-side prepared statement per
	// text until the cache evicts it. Exec mode sends parse, bind and execute of an unnamed
	// statement in one round trip. Statements with $n arguments still work: the server infers
	// their types from the text-encoded values.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	return stdlib.OpenDB(*cfg), nil
}

// mysqlConfig builds the go-sql-driver configuration. multiStatements stays off: Migrate splits
// files into statements itself, so a single injected ";" can never run a second statement.
func mysqlConfig(ds config.DataSource) (*mysql.Config, error) {
	mode, err := sslMode(ds)
	if err != nil {
		return nil, err
	}
	host := hostOr(ds.Host, "127.0.0.1")
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = ds.User, ds.Password, ds.Database
	if strings.HasPrefix(host, "/") {
		cfg.Net, cfg.Addr = "unix", host
	} else {
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, portOr(ds.Port, 3306))
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.Collation = "utf8mb4_unicode_ci"
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	cfg.Timeout = dialTimeout
	cfg.TLS, err = mysqlTLS(mode, host, ds.SSLRootCert)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// mysqlTLS maps ssl_mode onto a tls.Config. The config is set on the connector, not registered
// under a global name. require encrypts without verifying the server (as libpq's require);
// verify-ca checks the chain but not the host name; verify-full checks both.
func mysqlTLS(mode, host, rootCert string) (*tls.Config, error) {
	if mode == sslDisable {
		return nil, nil
	}
	if mode == sslRequire {
		return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, nil //nolint:gosec // ssl_mode=require means encrypt, do not verify
	}
	var roots *x509.CertPool // nil: the system pool
	if rootCert != "" {
		pem, err := os.ReadFile(rootCert)
		if err != nil {
			return nil, fmt.Errorf("ssl_root_cert: %w", err)
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ssl_root_cert %s: no PEM certificate found", rootCert)
		}
	}
	if mode == sslVerifyFull {
		return &tls.Config{RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12}, nil
	}
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // the chain is verified below, only the host name is not
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("server sent no certificate")
			}
			opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
			for _, c := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(opts)
			return err
		},
	}, nil
}

func openMySQL(ds config.DataSource) (*sql.DB, error) {
	cfg, err := mysqlConfig(ds)
	if err != nil {
		return nil, err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(connector), nil
}

// sqliteDSN returns the modernc DSN: the plain path (no file: URI, so % and other characters in
// the path are taken literally) followed by the connection settings every pooled connection runs.
func sqliteDSN(path string) (string, error) {
	if path == "" {
		return "", errors.New("path is required")
	}
	if strings.ContainsAny(path, "?#") {
		return "", fmt.Errorf("path %q: must not contain ? or #", path)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeoutMS))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	q.Set("_time_format", "sqlite")
	return path + "?" + q.Encode(), nil
}

func openSQLite(ds config.DataSource) (*sql.DB, error) {
	dsn, err := sqliteDSN(ds.Path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(ds.Path), 0o750); err != nil {
		return nil, fmt.Errorf("create directory: %w", err)
	}
	sqldb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	// Several connections let readers run beside the single writer (WAL); writers queue on the
	// database lock through busy_timeout. Idle connections are kept so that the per-connection
	// pragmas run once per connection, not once per query.
	sqldb.SetMaxOpenConns(sqliteMaxOpenConns)
	sqldb.SetMaxIdleConns(sqliteMaxOpenConns)
	return sqldb, nil
}

package config

import (
	"fmt"
	"sort"
)

// DBKind is the type of a data source.
type DBKind string

// Data source kinds (spec §8.3). Oracle and SQL Server are declared but fail at startup with
// ErrUnsupportedDBKind.
const (
	Postgres  DBKind = "postgres"
	MySQL     DBKind = "mysql"
	SQLite    DBKind = "sqlite"
	Oracle    DBKind = "oracle"
	SQLServer DBKind = "sqlserver"
)

// SSLMode is the TLS mode of a network data source.
type SSLMode string

// SSL modes of svc.data_sources.<name>.ssl_mode.
const (
	SSLDisable    SSLMode = "disable"
	SSLRequire    SSLMode = "require"
	SSLVerifyCA   SSLMode = "verify-ca"
	SSLVerifyFull SSLMode = "verify-full"
)

// KVNetwork is the network of the key-value store connection.
type KVNetwork string

// Networks of svc.kvstore.network.
const (
	NetworkTCP  KVNetwork = "tcp"
	NetworkUnix KVNetwork = "unix"
)

// PrimaryDataSource is the name of the required data source that backs the framework.
const PrimaryDataSource = "primary"

// Defaults of data sources and the key-value store.
const (
	defaultPostgresPort   = 5432
	defaultMySQLPort      = 3306
	defaultPostgresSchema = "public"
	defaultKVHost         = "127.0.0.1"
	defaultKVPort         = 6379
)

// DataSource is one entry of the svc.data_sources map (spec §8.3). Its keys are
// svc.data_sources.<name>.<key>; from the environment SVC_DATA_SOURCES_<NAME>_<KEY>.
type DataSource struct {
	// Type is svc.data_sources.<name>.type: postgres, mysql or sqlite. Required.
	Type DBKind `toml:"type"`
	// Host is svc.data_sources.<name>.host: the network host (required for postgres, mysql).
	Host string `toml:"host"`
	// Port is svc.data_sources.<name>.port: the network port (default 5432 for postgres, 3306
	// for mysql).
	Port uint16 `toml:"port"`
	// User is svc.data_sources.<name>.user: the user name.
	User string `toml:"user"`
	// Password is svc.data_sources.<name>.password (secret: redacted in `svc config check`).
	Password string `toml:"password" secret:"true"`
	// Database is svc.data_sources.<name>.database: the database name (required for postgres,
	// mysql).
	Database string `toml:"database"`
	// Schema is svc.data_sources.<name>.schema: the schema where the driver supports it
	// (PostgreSQL; default public).
	Schema string `toml:"schema"`
	// Path is svc.data_sources.<name>.path: the SQLite file path (required for sqlite).
	Path string `toml:"path"`
	// EnableSQLGuard is svc.data_sources.<name>.enable_sql_guard (default false): turn on the SQL
	// guard for modules that expose raw SQL.
	EnableSQLGuard bool `toml:"enable_sql_guard"`
	// SSLMode is svc.data_sources.<name>.ssl_mode: disable (default), require, verify-ca or
	// verify-full.
	SSLMode SSLMode `toml:"ssl_mode"`
	// SSLRootCert is svc.data_sources.<name>.ssl_root_cert: a PEM CA bundle path for verify-ca
	// and verify-full; empty uses the system pool.
	SSLRootCert string `toml:"ssl_root_cert"`
}

func (d *DataSource) applyDefaults() {
	switch d.Type {
	case Postgres:
		d.Port = orDefault(d.Port, defaultPostgresPort)
		d.Schema = orDefault(d.Schema, defaultPostgresSchema)
	case MySQL:
		d.Port = orDefault(d.Port, defaultMySQLPort)
	}
	d.SSLMode = orDefault(d.SSLMode, SSLDisable)
}

func (d *DataSource) validate(name string) []error {
	key := "svc.data_sources." + name
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(key+"."+format+": %w", append(args, ErrInvalidDataSource)...))
	}
	switch d.Type {
	case Oracle, SQLServer:
		errs = append(errs, fmt.Errorf("%s.type %q: %w", key, d.Type, ErrUnsupportedDBKind))
	case SQLite:
		if d.Path == "" {
			bad("path: required for sqlite")
		}
	case Postgres, MySQL:
		if d.Host == "" {
			bad("host: required for %s", d.Type)
		}
		if d.Database == "" {
			bad("database: required for %s", d.Type)
		}
	case "":
		bad("type: required (postgres, mysql or sqlite)")
	default:
		bad("type %q: want postgres, mysql or sqlite", d.Type)
	}
	switch d.SSLMode {
	case "", SSLDisable, SSLRequire, SSLVerifyCA, SSLVerifyFull:
	default:
		bad("ssl_mode %q: want disable, require, verify-ca or verify-full", d.SSLMode)
	}
	return errs
}

// validateDataSources requires the primary entry and checks every entry in name order.
func validateDataSources(m map[string]DataSource) []error {
	var errs []error
	if _, ok := m[PrimaryDataSource]; !ok {
		errs = append(errs, fmt.Errorf("svc.data_sources.primary: required: %w", ErrMissingPrimaryDataSource))
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ds := m[name]
		errs = append(errs, ds.validate(name)...)
	}
	return errs
}

// KVStore is the svc.kvstore section: the Redis client (spec §8.3).
type KVStore struct {
	// Enabled is svc.kvstore.enabled (default false). When false no client is built and no ping
	// runs.
	Enabled bool `toml:"enabled"`
	// Host is svc.kvstore.host (default 127.0.0.1); for network unix, the socket path.
	Host string `toml:"host"`
	// Port is svc.kvstore.port (default 6379).
	Port uint16 `toml:"port"`
	// User is svc.kvstore.user: the ACL user name.
	User string `toml:"user"`
	// Password is svc.kvstore.password (secret).
	Password string `toml:"password" secret:"true"`
	// Database is svc.kvstore.database (0–255, default 0).
	Database uint8 `toml:"database"`
	// Network is svc.kvstore.network: tcp (default) or unix.
	Network KVNetwork `toml:"network"`
}

func (k *KVStore) applyDefaults() {
	k.Host = orDefault(k.Host, defaultKVHost)
	k.Port = orDefault(k.Port, defaultKVPort)
	k.Network = orDefault(k.Network, NetworkTCP)
}

func (k *KVStore) validate() []error {
	switch k.Network {
	case "", NetworkTCP, NetworkUnix:
		return nil
	}
	return []error{fmt.Errorf("svc.kvstore.network %q: want tcp or unix: %w", k.Network, ErrInvalidKVStore)}
}

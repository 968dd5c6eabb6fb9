package config

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

// PrimaryDataSource is the name of the required data source that backs the framework.
const PrimaryDataSource = "primary"

// DataSource is one entry of the svc.data_sources map (spec §8.3).
type DataSource struct {
	// Type is svc.data_sources.<name>.type: postgres, mysql or sqlite.
	Type DBKind `toml:"type"`
	// Host is the network host.
	Host string `toml:"host"`
	// Port is the network port (default 5432 for postgres, 3306 for mysql).
	Port uint16 `toml:"port"`
	// User is the user name.
	User string `toml:"user"`
	// Password is the password (secret: redacted in `svc config check`).
	Password string `toml:"password"`
	// Database is the database name.
	Database string `toml:"database"`
	// Schema is the schema name where the driver supports it (PostgreSQL; default public).
	Schema string `toml:"schema"`
	// Path is the SQLite file path.
	Path string `toml:"path"`
	// EnableSQLGuard turns on the SQL guard for modules that expose raw SQL.
	EnableSQLGuard bool `toml:"enable_sql_guard"`
	// SSLMode is disable (default), require, verify-ca or verify-full.
	SSLMode string `toml:"ssl_mode"`
	// SSLRootCert is a PEM CA bundle path for verify-ca and verify-full; empty uses the system pool.
	SSLRootCert string `toml:"ssl_root_cert"`
}

// KVStore is the svc.kvstore section: the Redis client (spec §8.3).
type KVStore struct {
	// Enabled is svc.kvstore.enabled (default false). When false no client is built and no ping runs.
	Enabled bool `toml:"enabled"`
	// Host is svc.kvstore.host (default 127.0.0.1); for network unix, the socket path.
	Host string `toml:"host"`
	// Port is svc.kvstore.port (default 6379).
	Port uint16 `toml:"port"`
	// User is svc.kvstore.user (ACL user name).
	User string `toml:"user"`
	// Password is svc.kvstore.password (secret).
	Password string `toml:"password"`
	// Database is svc.kvstore.database (0–255).
	Database uint8 `toml:"database"`
	// Network is svc.kvstore.network: tcp (default) or unix.
	Network string `toml:"network"`
}

package config

import (
	"fmt"
	"time"
)

// Defaults of svc.mcp.query (ours).
const (
	// DefaultMCPQueryPermission is svc.mcp.query.permission's default.
	DefaultMCPQueryPermission = "sys.mcp.database_query"
	// DefaultMCPQueryMaxBytes is svc.mcp.query.max_bytes's default.
	DefaultMCPQueryMaxBytes = 4 * MiB
	// DefaultMCPQueryMaxSQLBytes is svc.mcp.query.max_sql_bytes's default.
	DefaultMCPQueryMaxSQLBytes = 64 * KiB
	defaultMCPQueryMaxRows     = 1000
	defaultMCPQueryTimeout     = 10 * time.Second
)

// MCP is the svc.mcp section (spec §5.1, §8.3).
type MCP struct {
	// Enabled is svc.mcp.enabled (default false): mount the /mcp endpoint.
	Enabled bool `toml:"enabled"`
	// RequireAuth is svc.mcp.require_auth, tri-state: nil (unset) or true requires Bearer
	// authentication, only an explicit false allows anonymous access. Use AuthRequired.
	RequireAuth *bool `toml:"require_auth"`
	// ExposeOperations is svc.mcp.expose_operations (ours, default false): list every /api
	// operation the caller may run as an MCP tool named <resource>.<action> and run it through
	// the /api engine (permission, rate limit, audit) when called.
	ExposeOperations bool `toml:"expose_operations"`
	// Query is svc.mcp.query (ours): the limits and the permission of the database_query tool.
	Query MCPQuery `toml:"query"`
}

// MCPQuery is svc.mcp.query (ours): the database_query tool of the MCP endpoint.
type MCPQuery struct {
	// Permission is svc.mcp.query.permission (default "sys.mcp.database_query"): the permission
	// token a caller needs to see and call database_query.
	Permission string `toml:"permission"`
	// MaxRows is svc.mcp.query.max_rows (default 1000): rows returned at most; the rest of the
	// result is dropped and the tool says so.
	MaxRows int `toml:"max_rows"`
	// MaxBytes is svc.mcp.query.max_bytes (default 4mib): the bytes of the encoded answer at
	// most — the JSON text of the rows (column names repeated in each row, nulls, numbers,
	// escapes, base64) and the truncation note — counted by the encoder as it writes them; past
	// it the statement is stopped and the tool answers an error. No single row larger than it
	// is read either.
	MaxBytes Size `toml:"max_bytes"`
	// MaxSQLBytes is svc.mcp.query.max_sql_bytes (default 64kib): the bytes of a call's
	// arguments at most, as sent (the SQL text and its params, JSON); a longer call is refused
	// before anything is decoded or sent to the database.
	MaxSQLBytes Size `toml:"max_sql_bytes"`
	// Timeout is svc.mcp.query.timeout (default 10s): the statement timeout the database
	// enforces on the query; the whole call — reading, encoding and writing the answer — ends
	// at most 3 s after it.
	Timeout time.Duration `toml:"timeout"`
	// DataSource is svc.mcp.query.data_source (default "primary"): the entry of
	// svc.data_sources the tool queries. On PostgreSQL and MySQL its login must not be a
	// superuser nor hold the server-file privileges (the tool refuses to run otherwise): name a
	// data source with a login that has only SELECT grants (docs/mcp.md).
	DataSource string `toml:"data_source"`
}

// AuthRequired reports whether /mcp requires Bearer authentication: true unless require_auth is
// explicitly false.
func (m MCP) AuthRequired() bool {
	return m.RequireAuth == nil || *m.RequireAuth
}

func (m *MCP) applyDefaults() {
	m.Query.Permission = orDefault(m.Query.Permission, DefaultMCPQueryPermission)
	m.Query.MaxRows = positive(m.Query.MaxRows, defaultMCPQueryMaxRows)
	m.Query.Timeout = positive(m.Query.Timeout, defaultMCPQueryTimeout)
	m.Query.MaxBytes = positive(m.Query.MaxBytes, DefaultMCPQueryMaxBytes)
	m.Query.MaxSQLBytes = positive(m.Query.MaxSQLBytes, DefaultMCPQueryMaxSQLBytes)
	m.Query.DataSource = orDefault(m.Query.DataSource, PrimaryDataSource)
}

// validate checks that svc.mcp.query.data_source names a data source (when the endpoint is on).
func (m *MCP) validate(sources map[string]DataSource) []error {
	if _, ok := sources[m.Query.DataSource]; m.Enabled && !ok {
		return []error{fmt.Errorf("svc.mcp.query.data_source %q: no such entry in svc.data_sources: %w", m.Query.DataSource, ErrInvalidDataSource)}
	}
	return nil
}

package config

// MCP is the svc.mcp section (spec §5.1, §8.3).
type MCP struct {
	// Enabled is svc.mcp.enabled (default false): mount the /mcp endpoint.
	Enabled bool `toml:"enabled"`
	// RequireAuth is svc.mcp.require_auth, tri-state: nil (unset) or true requires Bearer
	// authentication, only an explicit false allows anonymous access. Use AuthRequired.
	RequireAuth *bool `toml:"require_auth"`
}

// AuthRequired reports whether /mcp requires Bearer authentication: true unless require_auth is
// explicitly false.
func (m MCP) AuthRequired() bool {
	return m.RequireAuth == nil || *m.RequireAuth
}

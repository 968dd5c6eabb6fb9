package config

import (
	"fmt"
	"path"
	"strings"
)

// defaultConsolePath is the default of svc.console.path.
const defaultConsolePath = "/console"

// Console is the svc.console section (ours, issue #35): the operators' web console served from
// the binary.
type Console struct {
	// Enabled is svc.console.enabled (default true): serve the console. Off, its path answers
	// like any unknown path.
	Enabled bool `toml:"enabled"`
	// Path is svc.console.path (default /console): where the console is served; a clean
	// absolute path other than "/", outside /api, without a trailing slash (one is trimmed).
	Path string `toml:"path"`
}

func (c *Console) applyDefaults() {
	if p := strings.TrimRight(c.Path, "/"); p != "" { // "/" stays, for validate to refuse
		c.Path = p
	}
	c.Path = orDefault(c.Path, defaultConsolePath)
}

// validate checks the path the console's routes are built from: ServeMux patterns must not see
// "{", a space or a dot segment, and /api belongs to the engine.
func (c *Console) validate() []error {
	p := c.Path
	if p == "" {
		p = defaultConsolePath
	}
	ok := strings.HasPrefix(p, "/") && p != "/" && path.Clean(p) == p && !strings.ContainsAny(p, "?#{} \t") &&
		p != "/api" && !strings.HasPrefix(p, "/api/")
	if !ok {
		return []error{fmt.Errorf("svc.console.path %q: must be a clean absolute path other than / and outside /api: %w", p, ErrInvalidConsolePath)}
	}
	return nil
}

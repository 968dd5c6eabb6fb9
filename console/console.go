package console

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
)

// dist is the committed build of console/web (scripts/console.sh build).
//
//go:embed dist
var dist embed.FS

// BasePlaceholder is the text the build writes in index.html where the console's path belongs;
// the server replaces it with svc.console.path and a trailing slash ("/console/").
const BasePlaceholder = "%SVC_CONSOLE_BASE%"

// Assets returns the console's build embedded in the binary.
func Assets() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil { // "dist" is a valid path: fs.Sub cannot fail on it
		panic(err)
	}
	return sub
}

// Options are the console's extension points.
type Options struct {
	// Assets replaces the embedded build (a host's own build of console/web); it must hold
	// index.html at its root.
	Assets fs.FS
}

// Console is the console module: the handler of svc.console.path, or nothing when
// svc.console.enabled is false.
type Console struct {
	cfg     config.Console
	handler http.Handler // nil when disabled
}

// ErrNoIndex is returned by New for assets without index.html.
var ErrNoIndex = errors.New("console: the assets have no index.html")

// New builds the console from svc.console (deps.Config.Console) and the embedded build (or
// opts.Assets). It reads the assets once, in memory (they are embedded), and does no other I/O.
func New(deps app.Platform, opts Options) (*Console, error) {
	if deps.Config == nil {
		return nil, errors.New("console: a configuration is required")
	}
	c := &Console{cfg: deps.Config.Console}
	if !c.cfg.Enabled {
		return c, nil
	}
	assets := opts.Assets
	if assets == nil {
		assets = Assets()
	}
	h, err := newHandler(assets, c.prefix())
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	c.handler = h
	return c, nil
}

// prefix is svc.console.path without a trailing slash.
func (c *Console) prefix() string {
	p := strings.TrimRight(c.cfg.Path, "/")
	if p == "" {
		return "/console"
	}
	return p
}

// Module lists what the console adds to the server: GET (and HEAD) <path> redirecting to
// <path>/, and GET <path>/… serving the build. Disabled, nothing.
func (c *Console) Module() app.Module {
	m := app.Module{Name: "console"}
	if c.handler == nil {
		return m
	}
	p := c.prefix()
	m.Routes = []app.Route{
		{Pattern: http.MethodGet + " " + p + "/", Handler: c.handler},
		{Pattern: http.MethodGet + " " + p, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			target := p + "/"
			if r.URL.RawQuery != "" {
				target += "?" + r.URL.RawQuery
			}
			http.Redirect(w, r, target, http.StatusPermanentRedirect)
		})},
	}
	return m
}

package integration

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
)

// OutboundScheme is a host-defined outbound authentication scheme (wire-integration §7, §13).
// One with a built-in name replaces the built-in.
type OutboundScheme interface {
	// Name is the scheme as systems name it in outboundAuth.scheme.
	Name() string
	// SensitiveParams are the params sealed at rest and masked in answers ("*": every one).
	SensitiveParams() []string
	// Apply prepares the scheme for a system's decrypted params (an error is 2617, kind
	// config) and returns what it does to each request (an error there fails the call as an
	// auth-hook failure, kind config).
	Apply(params map[string]string) (func(req *http.Request) error, error)
}

// InboundScheme is a host-defined inbound authentication scheme (wire-integration §6, §13).
// One with a built-in name replaces the built-in.
type InboundScheme interface {
	// Name is the scheme as systems name it in inboundAuth.scheme.
	Name() string
	// SensitiveParams are the params sealed at rest and masked in answers ("*": every one).
	SensitiveParams() []string
	// Verify admits a delivery (nil) or refuses it (the uniform 401/2622, counted as auth).
	Verify(ctx context.Context, req *InboundRequest, params map[string]string) error
}

// schemeSet is the module's schemes of one direction: the built-ins' sensitive params plus
// the host's schemes.
type schemeSet struct {
	sensitive map[string][]string
	outbound  map[string]OutboundScheme
	inbound   map[string]InboundScheme
}

// newSchemeSets merges the host's schemes over the built-ins; a blank or twice-given name fails
// the build.
func newSchemeSets(out []OutboundScheme, in []InboundScheme) (schemeSet, schemeSet, error) {
	o := schemeSet{sensitive: maps.Clone(outboundSchemes), outbound: map[string]OutboundScheme{}}
	for _, sc := range out {
		name := strings.TrimSpace(sc.Name())
		if name == "" || o.outbound[name] != nil {
			return o, schemeSet{}, fmt.Errorf("integration: outbound scheme %q is blank or given twice", name)
		}
		o.outbound[name], o.sensitive[name] = sc, sc.SensitiveParams()
	}
	i := schemeSet{sensitive: maps.Clone(inboundSchemes), inbound: map[string]InboundScheme{}}
	for _, sc := range in {
		name := strings.TrimSpace(sc.Name())
		if name == "" || i.inbound[name] != nil {
			return o, i, fmt.Errorf("integration: inbound scheme %q is blank or given twice", name)
		}
		i.inbound[name], i.sensitive[name] = sc, sc.SensitiveParams()
	}
	return o, i, nil
}

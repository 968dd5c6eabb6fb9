package security

import (
	"context"
	"net/netip"
	"strings"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// IPAllow is the ip strategy over svc.security.ip_whitelists: the client IP (resolved through
// svc.app.trusted_proxies by the outer middleware) must fall in the named list, given as the
// first strategy argument (case-insensitive; default "default"). A missing or empty list, an
// unparsable address or no match all answer 401/1016; the principal is external_app
// "ip:<list>" without roles.
type IPAllow struct {
	lists map[string][]netip.Prefix
}

var _ rpc.Strategy = (*IPAllow)(nil)

// NewIPAllow returns the strategy of the configured lists (entries were validated by config;
// an entry that still does not parse is skipped).
func NewIPAllow(lists map[string][]string) *IPAllow {
	s := &IPAllow{lists: make(map[string][]netip.Prefix, len(lists))}
	for name, entries := range lists {
		var ps []netip.Prefix
		for _, e := range entries {
			if p, err := netip.ParsePrefix(e); err == nil {
				ps = append(ps, p.Masked())
			} else if a, err := netip.ParseAddr(e); err == nil {
				ps = append(ps, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			}
		}
		s.lists[strings.ToLower(name)] = ps
	}
	return s
}

// Name implements rpc.Strategy.
func (s *IPAllow) Name() string { return rpc.StrategyIP }

// Authenticate implements rpc.Strategy.
func (s *IPAllow) Authenticate(_ context.Context, req rpc.AuthRequest) (*rpc.Principal, error) {
	name := config.DefaultIPWhitelist
	if len(req.Args) > 0 && req.Args[0] != "" {
		name = strings.ToLower(req.Args[0])
	}
	addr, err := netip.ParseAddr(req.ClientIP)
	if err != nil {
		return nil, ErrIPNotAllowed
	}
	addr = addr.Unmap()
	for _, p := range s.lists[name] {
		if p.Contains(addr) {
			return &rpc.Principal{Type: rpc.PrincipalExternalApp, ID: "ip:" + name, Name: name, Roles: []string{}}, nil
		}
	}
	return nil, ErrIPNotAllowed
}

package integration

import (
	"encoding/hex"
	"maps"
	"net"
	"net/netip"
	"strings"
)

// sensitiveAll marks a scheme whose every param is a secret.
const sensitiveAll = "*"

// Built-in authentication schemes (wire-integration §6, §7) and their sensitive params (§9).
var (
	outboundSchemes = map[string][]string{
		"none": nil, "http_basic": {"password"}, "bearer": {"token"}, "signature": {"secret"},
		"header": {sensitiveAll}, "query": {sensitiveAll}, "script": {sensitiveAll},
	}
	inboundSchemes = map[string][]string{
		"none": nil, "ip": nil, "http_basic": {"password"}, "bearer": {"token"}, "signature": {"secret"},
		"header": {sensitiveAll}, "query": {sensitiveAll}, "script": {sensitiveAll},
	}
)

// sensitive reports whether param is a secret of scheme; every param of an unknown scheme is.
func sensitive(schemes map[string][]string, scheme, param string) bool {
	names, ok := schemes[scheme]
	if !ok {
		return true
	}
	for _, n := range names {
		if n == sensitiveAll || n == param {
			return true
		}
	}
	return false
}

// checkAuth validates the shape of an authentication (2617); an unknown outbound scheme is 2614.
func checkAuth(a *AuthConfig, schemes map[string][]string, outbound bool) error {
	if a == nil {
		return nil
	}
	if _, ok := schemes[a.Scheme]; !ok {
		if outbound {
			return ErrUnknownAuthScheme.WithArgs("scheme", a.Scheme)
		}
		return detail(ErrInvalidAuthParams, "unknown inbound scheme "+a.Scheme)
	}
	need := func(names ...string) error {
		for _, n := range names {
			if strings.TrimSpace(a.Params[n]) == "" {
				return detail(ErrInvalidAuthParams, a.Scheme+": "+n+" is required")
			}
		}
		return nil
	}
	switch a.Scheme {
	case "http_basic":
		return need("username", "password")
	case "bearer":
		return need("token")
	case "signature":
		if outbound {
			if err := need("appId"); err != nil {
				return err
			}
		}
		if err := need("secret"); err != nil {
			return err
		}
		if s := a.Params["secret"]; s != MaskedSecret && !strings.HasPrefix(s, sealedPrefix) {
			if _, err := hex.DecodeString(s); err != nil {
				return detail(ErrInvalidAuthParams, "signature: secret must be hex")
			}
		}
	case "header", "query":
		if len(a.Params) == 0 {
			return detail(ErrInvalidAuthParams, a.Scheme+": at least one param is required")
		}
	case "script":
		if strings.TrimSpace(a.Script) == "" {
			return detail(ErrInvalidAuthParams, "script: script is required")
		}
	case "ip":
		return checkWhitelist(a.Params["whitelist"])
	}
	return nil
}

// checkWhitelist: the ip scheme needs a non-empty list of IPs or CIDRs (an empty list would be
// "allow all", which the original refuses).
func checkWhitelist(list string) error {
	if strings.TrimSpace(list) == "" {
		return detail(ErrInvalidAuthParams, "ip: whitelist is required")
	}
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if _, err := netip.ParseAddr(e); err == nil {
			continue
		}
		if _, _, err := net.ParseCIDR(e); err != nil {
			return detail(ErrInvalidAuthParams, "ip: "+e+" is not an IP or CIDR")
		}
	}
	return nil
}

// sealAuth seals the secrets of a submitted authentication, keeping stored values where
// "******" was submitted (old may be nil).
func (s *Secrets) sealAuth(a, old *AuthConfig, schemes map[string][]string) error {
	if a == nil {
		return nil
	}
	params := maps.Clone(a.Params)
	for k, v := range params {
		if !sensitive(schemes, a.Scheme, k) {
			continue
		}
		var stored string
		if old != nil && old.Scheme == a.Scheme {
			stored = old.Params[k]
		}
		sealed, err := s.keep(v, stored)
		if err != nil {
			return detail(ErrInvalidAuthParams, a.Scheme+": "+k+" is masked but has no stored value")
		}
		params[k] = sealed
	}
	a.Params = params
	return nil
}

// maskAuth returns a copy of a with its secrets masked.
func maskAuth(a *AuthConfig, schemes map[string][]string) *AuthConfig {
	if a == nil {
		return nil
	}
	out := *a
	out.Params = maps.Clone(a.Params)
	for k, v := range out.Params {
		if sensitive(schemes, a.Scheme, k) {
			out.Params[k] = mask(v)
		}
	}
	return &out
}

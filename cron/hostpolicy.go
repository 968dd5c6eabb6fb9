package cron

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrHostNotAllowed is the cause of an http.request run refused by svc.cron.store.
// http_allowed_hosts (the URL's host, a redirect target or the resolved address).
var ErrHostNotAllowed = errors.New("cron store: http.request destination not allowed")

// internalRanges are the addresses http.request refuses unless an IP or CIDR entry of the
// allow-list covers them: loopback, private (RFC 1918, unique local), link-local (which holds
// the 169.254.169.254 metadata service), shared CGNAT space (100.100.100.200 metadata), the
// IETF protocol block (192.0.0.192 metadata), "this network", benchmarking, reserved and
// multicast ranges. IPv6 forms that embed an IPv4 address are refused as a whole, since a stack
// or a translator may deliver them to that IPv4 address: IPv4-mapped (::ffff:0:0/96) by
// unmapping before the check, IPv4-compatible (::/96, deprecated by RFC 4291; it holds :: and ::1
// too, so ::127.0.0.1 and ::a9fe:a9fe are refused) and NAT64 (64:ff9b::/96) by range. This is the
// only such list in svc: http.request is the only outbound call to a URL a user chooses that
// the framework guards.
var internalRanges = mustPrefixes(
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
	"192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
	"::/96", "fc00::/7", "fe80::/10", "ff00::/8", "64:ff9b::/96", "2001:db8::/32",
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// HostPolicy is the allow-list of http.request (svc.cron.store.http_allowed_hosts): host names
// (exact, or "*.example.com" for any subdomain), IPs and CIDRs.
type HostPolicy struct {
	names    map[string]bool
	suffixes []string
	prefixes []netip.Prefix
}

// NewHostPolicy parses the allow-list entries; an entry that is neither an IP, a CIDR nor a
// host name pattern is an error.
func NewHostPolicy(entries []string) (*HostPolicy, error) {
	p := &HostPolicy{names: map[string]bool{}}
	for _, e := range entries {
		e = strings.ToLower(strings.TrimSpace(e))
		if a, err := netip.ParseAddr(e); err == nil {
			a = a.Unmap()
			p.prefixes = append(p.prefixes, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		if pr, err := netip.ParsePrefix(e); err == nil {
			p.prefixes = append(p.prefixes, pr.Masked())
			continue
		}
		if e == "" || strings.ContainsAny(e, ":/@ ") {
			return nil, fmt.Errorf("cron store: http_allowed_hosts entry %q is not a host name, IP or CIDR", e)
		}
		if rest, ok := strings.CutPrefix(e, "*."); ok {
			p.suffixes = append(p.suffixes, "."+strings.TrimSuffix(rest, "."))
			continue
		}
		p.names[strings.TrimSuffix(e, ".")] = true
	}
	return p, nil
}

// empty reports an empty allow-list (every public address allowed).
func (p *HostPolicy) empty() bool {
	return len(p.names) == 0 && len(p.suffixes) == 0 && len(p.prefixes) == 0
}

// nameListed reports whether host matches a host name entry.
func (p *HostPolicy) nameListed(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if p.names[host] {
		return true
	}
	for _, s := range p.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// addrListed reports whether an IP or CIDR entry covers a.
func (p *HostPolicy) addrListed(a netip.Addr) bool {
	for _, pr := range p.prefixes {
		if pr.Contains(a) {
			return true
		}
	}
	return false
}

// CheckHost is the check before a request or redirect: with a non-empty list the URL's host
// must be a listed name, or an IP literal a listed IP or CIDR covers. Host names an entry does
// not list may still be refused; the address they resolve to is judged by CheckAddr.
func (p *HostPolicy) CheckHost(host string) error {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return p.CheckAddr(host, a)
	}
	if p.empty() || p.nameListed(host) {
		return nil
	}
	return fmt.Errorf("%w: host %q is not in svc.cron.store.http_allowed_hosts", ErrHostNotAllowed, host)
}

// CheckAddr is the check at dial time of the address host resolved to: an internal address
// needs an IP or CIDR entry covering it (a listed name is not enough: DNS may point it
// anywhere); a public one needs an empty list, a listed name or a covering entry.
func (p *HostPolicy) CheckAddr(host string, a netip.Addr) error {
	a = a.Unmap()
	if p.addrListed(a) {
		return nil
	}
	for _, pr := range internalRanges {
		if pr.Contains(a) {
			return fmt.Errorf("%w: %s resolves to internal address %s", ErrHostNotAllowed, host, a)
		}
	}
	if p.empty() || p.nameListed(host) {
		return nil
	}
	return fmt.Errorf("%w: %s (%s) is not in svc.cron.store.http_allowed_hosts", ErrHostNotAllowed, host, a)
}

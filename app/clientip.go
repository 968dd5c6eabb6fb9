package app

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies decides which peers may set X-Forwarded-For (svc.app.trusted_proxies). The zero value
// trusts nobody: the client IP is then always the peer address.
type Proxies struct {
	prefixes []netip.Prefix
}

// ParseProxies parses IPs and CIDRs. An entry that is neither is an error naming it.
func ParseProxies(entries []string) (Proxies, error) {
	var p Proxies
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			pfx, err := netip.ParsePrefix(e)
			if err != nil {
				return Proxies{}, fmt.Errorf("svc.app.trusted_proxies: %q is not an IP or CIDR", e)
			}
			p.prefixes = append(p.prefixes, pfx.Masked())
			continue
		}
		addr, err := netip.ParseAddr(e)
		if err != nil {
			return Proxies{}, fmt.Errorf("svc.app.trusted_proxies: %q is not an IP or CIDR", e)
		}
		p.prefixes = append(p.prefixes, netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()))
	}
	return p, nil
}

func (p Proxies) trusts(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, pfx := range p.prefixes {
		if pfx.Contains(addr) {
			return true
		}
	}
	return false
}

// ClientIP returns the client address of r. X-Forwarded-For is read only when the peer is a
// trusted proxy; it is then walked from the right, skipping trusted proxies, so a client cannot
// forge its address by prepending entries.
func (p Proxies) ClientIP(r *http.Request) string {
	if len(p.prefixes) == 0 {
		return peerString(r.RemoteAddr)
	}
	peer := peerAddr(r.RemoteAddr)
	if !peer.IsValid() || !p.trusts(peer) {
		return addrString(peer, r.RemoteAddr)
	}
	hops := r.Header.Values("X-Forwarded-For")
	var chain []string
	for _, h := range hops {
		for _, part := range strings.Split(h, ",") {
			chain = append(chain, strings.TrimSpace(part))
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(chain[i])
		if err != nil {
			break
		}
		if !p.trusts(a) || i == 0 {
			return a.Unmap().String()
		}
	}
	return addrString(peer, r.RemoteAddr)
}

// peerString is the peer's address as ClientIP reports it, without allocating for the common
// case: netip refuses IPv4 with leading zeros, so a host part that parses as IPv4 is already in
// canonical form and is returned as a substring. Anything else goes through netip for the
// unmapped canonical form.
func peerString(remote string) string {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
			return host
		}
	}
	return addrString(peerAddr(remote), remote)
}

func peerAddr(remote string) netip.Addr {
	host := remote
	if h, _, err := net.SplitHostPort(remote); err == nil {
		host = h
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

func addrString(a netip.Addr, raw string) string {
	if a.IsValid() {
		return a.String()
	}
	return raw
}

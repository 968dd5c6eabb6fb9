package app

import (
	"net/http/httptest"
	"testing"
)

func TestClientIP(t *testing.T) {
	tests := []struct {
		name    string
		trusted []string
		remote  string
		xff     string
		want    string
	}{
		{"no proxies ignores header", nil, "203.0.113.9:5000", "1.2.3.4", "203.0.113.9"},
		{"untrusted peer ignores header", []string{"10.0.0.0/8"}, "203.0.113.9:5000", "1.2.3.4", "203.0.113.9"},
		{"trusted peer uses header", []string{"10.0.0.0/8"}, "10.1.2.3:5000", "1.2.3.4", "1.2.3.4"},
		{"rightmost untrusted wins", []string{"10.0.0.0/8"}, "10.1.2.3:5000", "6.6.6.6, 1.2.3.4, 10.9.9.9", "1.2.3.4"},
		{"all trusted takes leftmost", []string{"10.0.0.0/8"}, "10.1.2.3:5000", "10.0.0.7, 10.9.9.9", "10.0.0.7"},
		{"garbage stops the walk", []string{"10.1.2.3"}, "10.1.2.3:5000", "nonsense", "10.1.2.3"},
		{"ipv6 peer", nil, "[::1]:80", "", "::1"},
		{"v4-mapped peer is unmapped", nil, "[::ffff:192.0.2.1]:80", "", "192.0.2.1"},
		{"peer without port", nil, "192.0.2.1", "", "192.0.2.1"},
		{"unparsable peer is kept as is", nil, "pipe", "", "pipe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseProxies(tt.trusted)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			if tt.xff != "" {
				r.Header.Set("X-Forwarded-For", tt.xff)
			}
			if got := p.ClientIP(r); got != tt.want {
				t.Errorf("ClientIP = %q, want %q", got, tt.want)
			}
		})
	}
}

// The address of an IPv4 peer is on every request's path; with no trusted proxies it must not
// allocate.
func TestClientIPNoAllocForIPv4Peer(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "203.0.113.9:5000"
	var p Proxies
	if n := testing.AllocsPerRun(100, func() { _ = p.ClientIP(r) }); n != 0 {
		t.Errorf("ClientIP allocates %v times per call", n)
	}
}

func TestParseProxiesRejectsGarbage(t *testing.T) {
	if _, err := ParseProxies([]string{"10.0.0.0/99"}); err == nil {
		t.Error("ParseProxies accepted an invalid CIDR")
	}
	if _, err := ParseProxies([]string{"localhost"}); err == nil {
		t.Error("ParseProxies accepted a host name")
	}
}

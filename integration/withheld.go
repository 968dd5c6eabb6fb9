package integration

import (
	"maps"
	"strings"
)

// withoutCredentials is the delivery as an inbound adapter script sees it (issue #42 item 7):
// the credentials the gateway verified are withheld, so no adapter can print, cache, return or
// forward a partner's credential, and the masks of the API, console and log are not the only
// thing standing between an adapter author and it. Removed are
//
//   - the Authorization header under the http_basic and bearer schemes (it carries the
//     password base64-encoded, which no value comparison would see);
//   - every header and query parameter whose value contains the value of a sensitive param of
//     the system's inbound authentication (its token, password, secret, every param of the
//     header, query and script schemes, a custom scheme's SensitiveParams) — whichever scheme
//     verified it, and whatever name the partner sent it under.
//
// The body is handed over as it is: a scheme that authenticates by a field of the body (a
// script scheme may) leaves that field to the adapter. The inbound authentication script itself
// still sees the whole request: it is the verifier. req is not changed (the log row keeps what
// the caller sent, masked); the result shares only the body.
func (s *Service) withoutCredentials(sys *System, req *InboundRequest) *InboundRequest {
	out := *req
	out.Headers, out.Query = maps.Clone(req.Headers), maps.Clone(req.Query)
	a := sys.InboundAuth
	if a == nil {
		return &out
	}
	if a.Scheme == "http_basic" || a.Scheme == "bearer" {
		delete(out.Headers, "authorization")
	}
	p, err := s.openAuth(a)
	if err != nil {
		return &out
	}
	var secrets []string
	for k, v := range p {
		if v != "" && sensitive(s.inAuth.sensitive, a.Scheme, k) {
			secrets = append(secrets, v)
		}
	}
	holds := func(v string) bool {
		for _, sec := range secrets {
			if strings.Contains(v, sec) {
				return true
			}
		}
		return false
	}
	maps.DeleteFunc(out.Headers, func(_, v string) bool { return holds(v) })
	maps.DeleteFunc(out.Query, func(_, v string) bool { return holds(v) })
	return &out
}

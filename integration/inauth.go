package integration

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// InboundRequest is a delivery as the pipeline and the inbound scripts see it
// (wire-integration §6): header names lower-cased with values joined by ", ", one value per
// query name, the raw body and the resolved client IP.
type InboundRequest struct {
	SystemCode   string            `json:"-"`
	ContractCode string            `json:"-"`
	Protocol     string            `json:"protocol"`
	Method       string            `json:"method"`
	Path         string            `json:"path"`
	Headers      map[string]string `json:"headers"`
	Query        map[string]string `json:"query"`
	Body         []byte            `json:"-"`
	ClientAddr   string            `json:"clientAddr"`
}

// bindRequest sets the delivery as the script's global request (body as a string): the
// headers, query and addresses go as JSON, the body as its bytes, set in the worker as one string
// value. Through JSON the body would be escaped (a NUL byte is six bytes), copied and parsed
// again, several times its size outside the body memory budget for a body up to 16 MiB.
func (q *InboundRequest) bindRequest(r *run) error {
	head, err := json.Marshal(q)
	if err != nil {
		return err
	}
	body := q.Body
	if body == nil {
		body = []byte{}
	}
	r.setData("request", head, body)
	return nil
}

// authFailure is a refused verification: kind auth (bad or missing credentials) or config (the
// system's inbound authentication cannot be applied). Both answer the same 401/2622.
type authFailure struct {
	kind   string
	reason string
}

func (f *authFailure) Error() string { return f.kind + ": " + f.reason }

func denied(format string, a ...any) *authFailure {
	return &authFailure{kind: KindAuth, reason: fmt.Sprintf(format, a...)}
}

func misconfigured(format string, a ...any) *authFailure {
	return &authFailure{kind: KindConfig, reason: fmt.Sprintf(format, a...)}
}

// needsBody reports whether sys's inbound scheme reads the body: the script scheme and host
// schemes (InboundScheme.Verify is handed the whole request) do; the built-in others look only
// at headers, query and client address (signature signs method, path, nonce and timestamp), so
// they are verified before the body is read.
func (s *Service) needsBody(sys *System) bool {
	a := sys.InboundAuth
	if a == nil {
		return false
	}
	return a.Scheme == "script" || s.inAuth.inbound[a.Scheme] != nil
}

// verifyInbound applies the system's inbound scheme (fail closed: no inboundAuth refuses).
func (s *Service) verifyInbound(ctx context.Context, sys *System, req *InboundRequest) *authFailure {
	a := sys.InboundAuth
	if a == nil || a.Scheme == "" {
		return misconfigured("the system has no inbound authentication")
	}
	if _, ok := s.inAuth.sensitive[a.Scheme]; !ok {
		return misconfigured("unknown inbound scheme %q", a.Scheme)
	}
	p, err := s.openAuth(a)
	if err != nil {
		return misconfigured("%v", err)
	}
	if custom := s.inAuth.inbound[a.Scheme]; custom != nil {
		if err := custom.Verify(ctx, req, p); err != nil {
			return denied("%s: %v", a.Scheme, err)
		}
		return nil
	}
	need := func(names ...string) *authFailure {
		for _, n := range names {
			if p[n] == "" {
				return misconfigured("%s: param %s is missing", a.Scheme, n)
			}
		}
		return nil
	}
	switch a.Scheme {
	case "none":
		return nil
	case "ip":
		return verifyIP(p["whitelist"], req.ClientAddr)
	case "http_basic":
		if f := need("username", "password"); f != nil {
			return f
		}
		word, cred, _ := strings.Cut(req.Headers["authorization"], " ")
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
		user, pass, ok := strings.Cut(string(raw), ":")
		if !strings.EqualFold(word, "basic") || err != nil || !ok {
			return denied("http_basic: no basic credentials")
		}
		u := subtle.ConstantTimeCompare([]byte(user), []byte(p["username"]))
		pw := subtle.ConstantTimeCompare([]byte(pass), []byte(p["password"]))
		if u&pw != 1 {
			return denied("http_basic: wrong credentials")
		}
		return nil
	case "bearer":
		if f := need("token"); f != nil {
			return f
		}
		word, tok, _ := strings.Cut(req.Headers["authorization"], " ")
		if !strings.EqualFold(word, "bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(p["token"])) != 1 {
			return denied("bearer: wrong token")
		}
		return nil
	case "header", "query":
		if len(p) == 0 {
			return misconfigured("%s: no params", a.Scheme)
		}
		for k, want := range p {
			got := req.Query[k]
			if a.Scheme == "header" {
				got = req.Headers[strings.ToLower(k)]
			}
			if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
				return denied("%s: %s does not match", a.Scheme, k)
			}
		}
		return nil
	case "signature":
		if f := need("secret"); f != nil {
			return f
		}
		return s.verifySignature(ctx, sys.Code, p["secret"], req)
	case "script":
		return s.verifyScript(ctx, sys, a.Script, p, req)
	}
	return misconfigured("unknown inbound scheme %q", a.Scheme)
}

// verifyIP: the client IP must match an entry of the whitelist; an empty list is a
// configuration fault (never "allow all") and an unparsable entry denies everyone.
func verifyIP(list, client string) *authFailure {
	if strings.TrimSpace(list) == "" {
		return misconfigured("ip: empty whitelist")
	}
	ip, err := netip.ParseAddr(client)
	if err != nil {
		return denied("ip: client address %q", client)
	}
	ip = ip.Unmap()
	matched := false
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if a, err := netip.ParseAddr(e); err == nil {
			matched = matched || a.Unmap() == ip
			continue
		}
		_, n, err := net.ParseCIDR(e)
		if err != nil {
			return misconfigured("ip: whitelist entry %q is not an IP or CIDR", e)
		}
		matched = matched || n.Contains(ip.AsSlice())
	}
	if !matched {
		return denied("ip: %s is not whitelisted", client)
	}
	return nil
}

// verifySignature checks the framework HMAC-SHA256 signature (app_id = system code, the
// request's method and path), the timestamp within ±5 minutes, then spends the nonce in the
// shared nonce store, so a replay — on this node or, with Redis, any other — is refused.
func (s *Service) verifySignature(ctx context.Context, systemCode, secret string, req *InboundRequest) *authFailure {
	tsRaw, nonce, sig := req.Headers[headerTimestamp], req.Headers[headerNonce], req.Headers[headerSignature]
	if tsRaw == "" || nonce == "" || sig == "" || len(nonce) > 128 {
		return denied("signature: headers missing")
	}
	ts, err := strconv.ParseInt(tsRaw, 10, 64)
	if err != nil {
		return denied("signature: bad timestamp")
	}
	now := s.clock()
	if d := now.Sub(time.Unix(ts, 0)); d > signatureTolerance || d < -signatureTolerance {
		return denied("signature: timestamp outside the tolerance")
	}
	want, err := signature(secret, signaturePayload(systemCode, req.Method, nonce, req.Path, ts))
	if err != nil {
		return misconfigured("%v", err)
	}
	if subtle.ConstantTimeCompare([]byte(strings.ToLower(sig)), []byte(want)) != 1 {
		return denied("signature: mismatch")
	}
	fresh, err := s.nonces.Use(ctx, systemCode+"\x00"+nonce, signatureNonceTTL, now)
	if err != nil {
		return misconfigured("signature: nonce store: %v", err)
	}
	if !fresh {
		return denied("signature: nonce replayed")
	}
	return nil
}

// verifyScript runs the inbound auth script in a zero-IO runtime with request and params; a
// truthy result grants. A script that fails is a configuration fault.
func (s *Service) verifyScript(ctx context.Context, sys *System, script string, params map[string]string, req *InboundRequest) *authFailure {
	ctx, release, err := s.engine.reserve(ctx)
	if err != nil {
		return misconfigured("script: %s", scriptMessage(err))
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RunTimeout)
	defer cancel()
	pj, _ := json.Marshal(params)
	out, err := s.engine.runBody(ctx, "inbound-auth.js", script, func(r *run) error {
		r.mask = s.consoleMask(sys) // console output as the adapter's: the system's secrets masked
		if err := req.bindRequest(r); err != nil {
			return err
		}
		r.setData("params", pj, nil)
		return nil
	})
	if err != nil {
		return misconfigured("script: %s", scriptMessage(err))
	}
	var v any
	if json.Unmarshal(out, &v) != nil || !truthy(v) {
		return denied("script: refused")
	}
	return nil
}

func truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case float64:
		return t != 0
	case string:
		return t != ""
	}
	return true
}

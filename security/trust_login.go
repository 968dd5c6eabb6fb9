package security

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// TrustTimestampTolerance is how far the gateway request's timestamp may be from the server's
// clock, either way (wire-core §3.1: ±5 minutes).
const TrustTimestampTolerance = 5 * time.Minute

// trustNonceTTL is how long a used nonce is remembered: twice the tolerance plus a minute
// (wire-core §3.1), so a nonce cannot come back while its timestamp is acceptable.
const trustNonceTTL = 2*TrustTimestampTolerance + time.Minute

// Bounds of the gateway's query values; longer values are refused before any work.
const (
	maxTrustNonce    = 128
	maxTrustUserID   = 255
	maxTrustRedirect = 2048
)

// TrustUserResolver maps a signed gateway request's user_id to the principal to log in. Any
// error (or a nil principal, or a reserved id) answers the gateway with 401/1062. The default
// resolves user_id as a user name of the user directory (the built-in store, or
// Options.UserStore), refusing disabled users.
type TrustUserResolver interface {
	ResolveTrustUser(ctx context.Context, appID, userID string) (*rpc.Principal, error)
}

// TrustUserResolverFunc adapts a function to TrustUserResolver.
type TrustUserResolverFunc func(ctx context.Context, appID, userID string) (*rpc.Principal, error)

// ResolveTrustUser implements TrustUserResolver.
func (f TrustUserResolverFunc) ResolveTrustUser(ctx context.Context, appID, userID string) (*rpc.Principal, error) {
	return f(ctx, appID, userID)
}

// TrustSecretLoader supplies the hex HMAC secret of a trust-login app whose
// svc.security.trust_login.apps.<appId>.secret is empty (the host's app loader). An error
// refuses the request with 401/1060.
type TrustSecretLoader interface {
	TrustSecret(ctx context.Context, appID string) (string, error)
}

// storeTrustUsers is the default TrustUserResolver: user_id is a user name of the directory.
type storeTrustUsers struct{ users UserStore }

func (s storeTrustUsers) ResolveTrustUser(ctx context.Context, _, userID string) (*rpc.Principal, error) {
	u, err := s.users.LookupUser(ctx, NormalizeUsername(userID))
	if err != nil {
		return nil, err
	}
	if u.Disabled {
		return nil, fmt.Errorf("user disabled: %w", ErrUserNotFound)
	}
	return u.Principal(), nil
}

// TrustRequest is the signed query of a gateway request (wire-core §5.9 leg 1): what a trusted
// app puts on the link that sends a user to GET <trust_login.path>. Apps written in Go (and
// tests) build the link with Query.
type TrustRequest struct {
	AppID     string
	UserID    string
	Redirect  string
	Nonce     string
	Timestamp int64 // Unix seconds
}

// Payload is the canonical string the signature covers (wire-core §3.1): the pairs app_id,
// method (GET), nonce, path, timestamp and the bound params user_id and redirect, sorted by key
// and joined with "&". Fixed values are used as they are; bound values are percent-encoded per
// RFC 3986 (unreserved characters kept, upper-case hex, space as %20).
func (r TrustRequest) Payload(path string) string {
	pairs := [][2]string{
		{"app_id", r.AppID}, {"method", http.MethodGet}, {"nonce", r.Nonce}, {"path", path},
		{"timestamp", strconv.FormatInt(r.Timestamp, 10)},
		{"redirect", encodeRFC3986(r.Redirect)}, {"user_id", encodeRFC3986(r.UserID)},
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p[0])
		b.WriteByte('=')
		b.WriteString(p[1])
	}
	return b.String()
}

// Sign returns the lower-case hex HMAC-SHA256 of Payload(path) under the app's hex secret.
func (r TrustRequest) Sign(path, secretHex string) (string, error) {
	key, err := hex.DecodeString(secretHex)
	if err != nil || len(key) == 0 {
		return "", fmt.Errorf("security: trust login secret: not hex")
	}
	return hex.EncodeToString(trustMAC(key, r.Payload(path))), nil
}

// Query returns the gateway query: app_id, user_id, redirect, timestamp, nonce and signature.
func (r TrustRequest) Query(path, secretHex string) (url.Values, error) {
	sig, err := r.Sign(path, secretHex)
	if err != nil {
		return nil, err
	}
	return url.Values{"app_id": {r.AppID}, "user_id": {r.UserID}, "redirect": {r.Redirect},
		"timestamp": {strconv.FormatInt(r.Timestamp, 10)}, "nonce": {r.Nonce}, "signature": {sig}}, nil
}

func trustMAC(key []byte, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// encodeRFC3986 percent-encodes every byte outside the unreserved set A–Z a–z 0–9 - . _ ~ with
// upper-case hex (so a space is %20, never +).
func encodeRFC3986(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// redirectRule is one entry of apps.<appId>.redirect_urls: a target must have the same scheme
// and host (case-insensitive, port included) and a path equal to or below the entry's path,
// segment by segment.
type redirectRule struct {
	scheme, host string
	segments     []string
}

// newRedirectRules parses redirect_urls (already validated by config: absolute http(s), host,
// no user info or fragment).
func newRedirectRules(urls []string) ([]redirectRule, error) {
	rules := make([]redirectRule, 0, len(urls))
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("redirect url %q: not absolute", raw)
		}
		rules = append(rules, redirectRule{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Host), segments: pathSegments(u.Path)})
	}
	return rules, nil
}

// allowRedirect parses target and returns it when a rule covers it. Refused outright: anything
// that is not an absolute http(s) URL with a host (so "//evil" and "https:evil" fail), user
// info ("https://good@evil"), backslashes, white space and control characters (which browsers
// read differently from parsers), and "." or ".." path segments, also percent-encoded or with a
// ";" parameter (path traversal out of the allowed path).
func allowRedirect(rules []redirectRule, target string) (*url.URL, bool) {
	if target == "" || len(target) > maxTrustRedirect || strings.ContainsFunc(target, func(r rune) bool {
		return r <= ' ' || r == 0x7f || r == '\\'
	}) {
		return nil, false
	}
	u, err := url.Parse(target)
	if err != nil || u.Opaque != "" || u.User != nil || u.Host == "" {
		return nil, false
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if scheme != "http" && scheme != "https" {
		return nil, false
	}
	segs := pathSegments(u.Path)
	for _, s := range segs {
		if s == "." || s == ".." || strings.HasPrefix(s, ".;") || strings.HasPrefix(s, "..;") {
			return nil, false
		}
	}
	for _, r := range rules {
		if r.scheme == scheme && r.host == host && hasPrefixSegments(segs, r.segments) {
			return u, true
		}
	}
	return nil, false
}

// withTrustCode returns the query of the gateway's redirect (wire-core §5.9: app_id and code
// added, existing query kept): rawQuery byte for byte, split on "&" only (as browsers split it,
// so "b=x;y" and a bare "flag" survive), without the pairs whose unescaped name is app_id or
// code, followed by app_id=<appID>&code=<code>. Re-encoding through url.Values would drop pairs
// containing ";", turn "flag" into "flag=" and reorder the keys.
func withTrustCode(rawQuery, appID, code string) string {
	var b strings.Builder
	for pair := range strings.SplitSeq(rawQuery, "&") {
		key, _, _ := strings.Cut(pair, "=")
		if name, err := url.QueryUnescape(key); err == nil && (name == "app_id" || name == "code") {
			continue
		}
		b.WriteString(pair)
		b.WriteByte('&')
	}
	kept := strings.TrimRight(b.String(), "&")
	if kept != "" {
		kept += "&"
	}
	return kept + "app_id=" + url.QueryEscape(appID) + "&code=" + url.QueryEscape(code)
}

// pathSegments splits a decoded path into its segments, ignoring the leading and a trailing
// slash ("/a/b/" → [a b]; "/" and "" → []).
func pathSegments(p string) []string {
	p = strings.TrimPrefix(p, "/")
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func hasPrefixSegments(segs, prefix []string) bool {
	if len(segs) < len(prefix) {
		return false
	}
	for i := range prefix {
		if segs[i] != prefix[i] {
			return false
		}
	}
	return true
}

// userAgentHash is the digest of r's User-Agent that a trust code is bound to.
func userAgentHash(r *http.Request) string {
	if r == nil {
		return digest("")
	}
	return digest(r.UserAgent())
}

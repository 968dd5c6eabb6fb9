package security

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/textproto"
	"slices"
	"sort"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// HeaderAPIKey is the default header of the api_key strategy (wire-core §3.1).
const HeaderAPIKey = "X-API-Key"

// APIKeys is the api_key strategy over svc.security.api_keys. The first strategy argument, when
// given, names another header. Keys are compared as SHA-256 digests in constant time against
// every configured key, so neither timing nor the first mismatching byte reveals a key.
// Missing or unknown keys answer 401/1025; the principal is external_app "api_key:<name>".
type APIKeys struct {
	keys []apiKey
}

type apiKey struct {
	name   string
	digest [sha256.Size]byte
	roles  []string
}

var _ rpc.Strategy = (*APIKeys)(nil)

// NewAPIKeys returns the strategy of the configured keys (names already lowercased by config).
func NewAPIKeys(keys map[string]config.APIKey) *APIKeys {
	names := make([]string, 0, len(keys))
	for n := range keys {
		names = append(names, n)
	}
	sort.Strings(names)
	s := &APIKeys{}
	for _, n := range names {
		s.keys = append(s.keys, apiKey{name: n, digest: sha256.Sum256([]byte(keys[n].Key)), roles: slices.Clone(keys[n].Roles)})
	}
	return s
}

// Name implements rpc.Strategy.
func (s *APIKeys) Name() string { return rpc.StrategyAPIKey }

// Authenticate implements rpc.Strategy.
func (s *APIKeys) Authenticate(_ context.Context, req rpc.AuthRequest) (*rpc.Principal, error) {
	header := HeaderAPIKey
	if len(req.Args) > 0 && req.Args[0] != "" {
		header = textproto.CanonicalMIMEHeaderKey(req.Args[0])
	}
	raw := ""
	if req.Request != nil {
		raw = req.Request.Header.Get(header)
	}
	if raw == "" {
		return nil, ErrAPIKeyInvalid
	}
	got := sha256.Sum256([]byte(raw))
	match := -1
	for i := range s.keys { // no early exit: the time does not depend on which key matched
		if subtle.ConstantTimeCompare(got[:], s.keys[i].digest[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return nil, ErrAPIKeyInvalid
	}
	k := s.keys[match]
	roles := slices.Clone(k.roles)
	if roles == nil {
		roles = []string{}
	}
	return &rpc.Principal{Type: rpc.PrincipalExternalApp, ID: "api_key:" + k.name, Name: k.name, Roles: roles}, nil
}

package security

import (
	"context"
	"crypto/hmac"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/kv"
	"github.com/svc-framework/svc/rpc"
)

// trustApp is one configured trust-login app: its redirect rules and, unless a loader supplies
// it, its HMAC key.
type trustApp struct {
	rules  []redirectRule
	secret []byte
}

// trustGateway is the trust-login gateway, GET <svc.security.trust_login.path> (wire-core §5.9
// leg 1): it verifies the app's signed request, checks the redirect against the app's
// allowlist, resolves the user and redirects (302) to the target with app_id and a one-time
// code. Failures are plain text in the configured language with the status of the error (1060
// → 401, 1061 → 400, 1062 → 401, rate limit → 429).
type trustGateway struct {
	apps    map[string]trustApp
	secrets TrustSecretLoader
	users   TrustUserResolver
	nonces  kv.NonceStore
	codes   codeStore
	limiter *rpc.RateLimiter
	limit   rpc.Limit
	codeTTL time.Duration
	msgs    *i18n.Catalog
	now     func() time.Time
	logger  *slog.Logger
	events  *emitter
}

// buildTrustLogin sets up the gateway and the trust_code login type when trust login is on. The
// nonce and code stores live in Redis when the key-value store is enabled, else in memory.
func (s *Service) buildTrustLogin(deps app.Platform, opts Options, ext extensions) error {
	tl := deps.Config.Security.TrustLogin
	if !tl.Enabled {
		return nil
	}
	users := opts.TrustUsers
	if users == nil {
		if ext.users == nil {
			return errors.New("security: svc.security.trust_login is enabled but the host's password login has no user directory: set security.Options.TrustUsers")
		}
		users = storeTrustUsers{users: ext.users}
	}
	g := &trustGateway{apps: map[string]trustApp{}, secrets: opts.TrustSecrets, users: users,
		nonces: kv.NewMemoryNonces(), codes: newMemoryCodes(), limiter: rpc.NewRateLimiter(s.now),
		limit: rpc.Limit{Max: tl.RateLimit.Max, Period: tl.RateLimit.Period}, codeTTL: tl.CodeTTL,
		msgs: deps.I18n, now: s.now, logger: s.logger, events: s.events}
	if g.msgs == nil {
		g.msgs = i18n.MustNew(i18n.English, Messages())
	}
	for id, a := range tl.Apps {
		key := "svc.security.trust_login.apps." + id
		rules, err := newRedirectRules(a.RedirectURLs)
		if err != nil {
			return fmt.Errorf("%s.redirect_urls: %v: %w", key, err, config.ErrTrustLoginRedirectInvalid)
		}
		var secret []byte
		switch {
		case a.Secret != "":
			if secret, err = hex.DecodeString(a.Secret); err != nil || len(secret) == 0 {
				return fmt.Errorf("%s.secret: not hex: %w", key, config.ErrInvalidSecret)
			}
		case opts.TrustSecrets == nil:
			return fmt.Errorf("security: %s.secret is empty and no security.Options.TrustSecrets loader supplies it", key)
		}
		g.apps[id] = trustApp{rules: rules, secret: secret}
	}
	if deps.KV != nil {
		prefix := "svc:trust:" + deps.Config.App.Name + ":"
		g.nonces = kv.NewRedisNonces(deps.KV, prefix+"nonce:")
		g.codes = &redisCodes{client: deps.KV, prefix: prefix + "code:"}
	}
	s.trust = g
	s.authenticators[LoginTypeTrustCode] = &trustCodeAuthenticator{codes: g.codes, now: s.now,
		bindUA: tl.BindUserAgent, bindIP: tl.BindClientIP}
	return nil
}

// ServeHTTP implements http.Handler.
func (g *trustGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	ctx := r.Context()
	q := r.URL.Query()
	appID := q.Get("app_id")
	if _, known := g.apps[appID]; !known {
		appID = "" // unknown apps share one bucket per client IP and are not echoed in events
	}
	ip := rpc.RequestInfoFrom(ctx).ClientIP
	if d := g.limiter.Allow(appID+"\x00"+ip, g.limit); !d.Allowed {
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(d.RetryAfter.Seconds()))))
		g.fail(ctx, w, appID, "rate_limited", rpc.ErrTooManyRequests)
		return
	}
	target, p, why, err := g.authorize(ctx, r, q)
	if err != nil {
		g.fail(ctx, w, appID, why, err)
		return
	}
	code, err := GenerateOpaqueToken()
	if err == nil {
		now := g.now()
		err = g.codes.put(ctx, digest(code), trustCode{AppID: appID, Principal: p, UserAgent: userAgentHash(r),
			ClientIP: ip, ExpiresAt: now.Add(g.codeTTL)}, now)
	}
	if err != nil {
		g.logger.ErrorContext(ctx, "trust login: code not stored", slog.Any("error", err))
		g.fail(ctx, w, appID, "store_error", rpc.ErrUnknown)
		return
	}
	g.events.emit(ctx, Event{Type: EventTrustCodeIssued, AppID: appID, PrincipalID: p.ID})
	loc := *target
	loc.RawQuery = withTrustCode(loc.RawQuery, appID, code)
	h.Set("Location", loc.String())
	w.WriteHeader(http.StatusFound)
}

// authorize checks a gateway request in the order of wire-core §5.9: app known, parameters
// present, timestamp within ±5 minutes, signature, nonce unused (only signed requests spend a
// nonce), redirect allowed, user resolved. It returns the redirect target and the principal, or
// a reason word and the error to answer with.
func (g *trustGateway) authorize(ctx context.Context, r *http.Request, q url.Values) (*url.URL, *rpc.Principal, string, error) {
	req := TrustRequest{AppID: q.Get("app_id"), UserID: q.Get("user_id"), Redirect: q.Get("redirect"), Nonce: q.Get("nonce")}
	app, ok := g.apps[req.AppID]
	if !ok {
		return nil, nil, "unknown_app", ErrTrustAuthFailed
	}
	sig, ts := q.Get("signature"), q.Get("timestamp")
	if req.UserID == "" || req.Redirect == "" || req.Nonce == "" || sig == "" || ts == "" ||
		len(req.Nonce) > maxTrustNonce || len(req.UserID) > maxTrustUserID || len(req.Redirect) > maxTrustRedirect {
		return nil, nil, "missing_param", ErrTrustAuthFailed
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, nil, "bad_timestamp", ErrTrustAuthFailed
	}
	now := g.now()
	if skew := now.Unix() - secs; skew > int64(TrustTimestampTolerance/time.Second) || skew < -int64(TrustTimestampTolerance/time.Second) {
		return nil, nil, "stale_timestamp", ErrTrustAuthFailed
	}
	req.Timestamp = secs
	key, err := g.secret(ctx, req.AppID, app)
	if err != nil {
		g.logger.WarnContext(ctx, "trust login: app secret unavailable", slog.String("app", rpc.LogText(req.AppID)), slog.Any("error", err))
		return nil, nil, "secret_unavailable", ErrTrustAuthFailed
	}
	given, err := hex.DecodeString(sig)
	if err != nil || !hmac.Equal(given, trustMAC(key, req.Payload(r.URL.Path))) {
		return nil, nil, "bad_signature", ErrTrustAuthFailed
	}
	fresh, err := g.nonces.Use(ctx, req.AppID+"\x00"+req.Nonce, trustNonceTTL, now)
	if err != nil {
		g.logger.ErrorContext(ctx, "trust login: nonce store failed", slog.Any("error", err))
		return nil, nil, "store_error", rpc.ErrUnknown
	}
	if !fresh {
		return nil, nil, "nonce_replayed", ErrTrustAuthFailed
	}
	target, ok := allowRedirect(app.rules, req.Redirect)
	if !ok {
		return nil, nil, "redirect_not_allowed", ErrTrustRedirectNotAllowed
	}
	p, err := g.users.ResolveTrustUser(ctx, req.AppID, req.UserID)
	if err != nil || !loginPrincipal(p) {
		return nil, nil, "user_not_resolved", ErrTrustUserNotResolved
	}
	return target, p, "", nil
}

// secret returns the app's HMAC key: configured, or from the host's loader.
func (g *trustGateway) secret(ctx context.Context, appID string, app trustApp) ([]byte, error) {
	if app.secret != nil {
		return app.secret, nil
	}
	h, err := g.secrets.TrustSecret(ctx, appID)
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(h)
	if err != nil || len(key) == 0 {
		return nil, errors.New("secret is not hex")
	}
	return key, nil
}

// fail answers with the error's status and its message as plain text, and emits the failure.
func (g *trustGateway) fail(ctx context.Context, w http.ResponseWriter, appID, why string, err error) {
	g.events.emit(ctx, Event{Type: EventTrustLoginFailed, AppID: appID, Reason: why})
	e, ok := rpc.AsError(err)
	if !ok {
		e = rpc.ErrUnknown
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(e.HTTPStatus())
	_, _ = w.Write([]byte(g.msgs.T(e.Key, e.Args)))
}

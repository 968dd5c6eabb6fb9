package security

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security/token"
)

//go:embed migrations
var migrationsFS embed.FS

//go:embed messages
var messageFiles embed.FS

// familyPurgeInterval is how often expired token families are deleted.
const familyPurgeInterval = time.Hour

// Migrations returns the module's migrations (tables sys_security_*), for Build and for the CLI.
func Migrations() *db.Migrations {
	return db.EmbeddedMigrations("security", migrationsFS)
}

// Messages returns the module's message catalog (messages/<lang>/security.json), for Module and
// for code that renders the module's messages without a server (the CLI).
func Messages() fs.FS { return i18n.MustSub(messageFiles, "messages") }

// Options are the host application's extension points. Every field is optional.
type Options struct {
	// Authenticators adds login types by name ("password" replaces the built-in store's
	// password login; "jwt_token", "opaque_token" and "refresh" are refused; "trust_code" is
	// the trust-login gateway's and cannot be replaced).
	Authenticators map[string]Authenticator
	// UserStore replaces the built-in store as the directory of the built-in password login.
	// When it also implements PrincipalLoader, TokenStateLoader, TOTPSecretLoader,
	// PasswordHistoryStore, PasswordMetadata or PasswordChanger, those are used too.
	UserStore UserStore
	// UserInfo loads get_user_info; default: the built-in store's loader (or none → 501/1500
	// when the host registered its own password authenticator).
	UserInfo UserInfoLoader
	// Permissions replaces the role-based checker of svc.security.roles.
	Permissions rpc.PermissionChecker
	// Challenges adds challenge providers to the chain (a provider of type "totp" replaces the
	// built-in one).
	Challenges []ChallengeProvider
	// TOTPSecrets loads the per-user secrets of the built-in totp challenge.
	TOTPSecrets TOTPSecretLoader
	// PasswordHistory backs password_policy.history_depth.
	PasswordHistory PasswordHistoryStore
	// PasswordMetadata backs password_policy.max_age.
	PasswordMetadata PasswordMetadata
	// PasswordChanger resolves the password_change challenge presented on max_age.
	PasswordChanger PasswordChanger
	// TokenState refuses tokens issued before a password change or disable.
	TokenState TokenStateLoader
	// PrincipalLoader reloads principals on refresh.
	PrincipalLoader PrincipalLoader
	// Events receives security events in addition to the server's event bus (BusSink
	// publishes them there in any case); without a bus it replaces the default, which logs
	// them at info level.
	Events EventSink
	// Tokens replaces the token service chosen by svc.security.token_type (JWT, or opaque
	// sessions). With a host token service there are no built-in sessions (Service.Sessions is
	// nil).
	Tokens TokenService
	// OnRevoke is called after every revocation of an opaque session on this node (logout,
	// eviction, forced). The push module, built after security, subscribes through
	// Sessions.OnRevoke when it is built (push.Options.Revocations, the root's wiring.go).
	OnRevoke RevocationHook
	// TrustUsers resolves the user_id of trust-login gateway requests (default: a user name of
	// the user directory).
	TrustUsers TrustUserResolver
	// TrustSecrets supplies the secrets of trust-login apps configured without one.
	TrustSecrets TrustSecretLoader
	// Lockout replaces the lockout store (default: Redis when svc.kvstore.enabled, else memory).
	Lockout LockoutStore
	// Hash sets the password-hash parameters of the built-in store (default DefaultHashParams).
	Hash HashParams
	// HideDepartments leaves security/department without operations (404/1200). The
	// composition root sets it when the host gave the approval module its own organisation
	// (approval.Options Directory, Assignees or Departments): the flows then name the host's
	// departments, which the built-in tables do not hold.
	HideDepartments bool
}

// Service is the security module at run time: what the composition root and host code use
// after New.
type Service struct {
	cfg            *config.Config
	logger         *slog.Logger
	now            func() time.Time
	tokens         TokenService
	authenticators map[string]Authenticator
	guard          *guard
	chain          *chain
	challenges     *challengeTokens
	userInfo       UserInfoLoader
	permissions    rpc.PermissionChecker
	store          *Store
	policy         *Policy
	events         *emitter
	sessions       *Sessions
	trust          *trustGateway
	feed           *token.Feed
	state          *token.State // the token state of the built-in token services; nil with a host's
	directory      *Directory
	keys           *token.Keys      // filled by start: configured or database secret
	jwt            *token.JWTTokens // the built-in jwt_token service; nil otherwise
	signals        *token.Signals
	db             *db.DB

	hideDepartments bool // Options.HideDepartments
}

// Tokens returns the token service (the bearer strategy's verifier).
func (s *Service) Tokens() TokenService { return s.tokens }

// Sessions returns the opaque sessions (forced logout, revocation hooks), or nil unless
// svc.security.token_type is opaque_token with the built-in token service.
func (s *Service) Sessions() *Sessions { return s.sessions }

// userChanged tells this node's modules that built-in user id changed (a handler of the
// built-in store's changes: this node's and the feed's): the signal token.SignalUserChanged on
// the bus, after the caches dropped the user, so a subscriber reads it afresh. The push module
// re-decides the user's WebSocket connections with it, so they end (or change roles) when
// /api's decision on their token does. With a host user store there is no change feed and no
// such signal.
func (s *Service) userChanged(id string) {
	s.signals.Send(context.Background(), token.SignalUserChanged, id)
}

// PermissionChecker returns the checker the composition root installs in the engine: the
// host's Options.Permissions, else the role-based checker of svc.security.roles.
func (s *Service) PermissionChecker() rpc.PermissionChecker { return s.permissions }

// Store returns the built-in user store, or nil when the host supplied the password login or
// the user directory.
func (s *Service) Store() *Store { return s.store }

// Directory returns the built-in directory over the built-in user store's tables. In a server
// on the built-in store it caches ResolveUsers, kept current by the change feed like the store's
// own cache (a change made by any process, the CLI included, reaches every server within
// ChangePollInterval); otherwise it reads the database on every call.
func (s *Service) Directory() *Directory { return s.directory }

// Policy returns the password policy (for host flows that set passwords).
func (s *Service) Policy() *Policy { return s.policy }

// New assembles the security module (spec §5, wire-core §2.3, §3, §5): the security/auth
// resource, the bearer, api_key, http_basic and ip strategies, the migrations of the built-in
// tables (always applied: token families, sessions and TOTP steps are needed whatever the user
// store), the token service of svc.security.token_type (JWT with families, or opaque sessions in
// the database or Redis), the trust-login gateway route when enabled, the purge workers and a
// start step that loads the signing key (configured, else generated once and kept in the
// primary database) and tells how to create the first user; Module lists them. It does no I/O.
func New(deps app.Platform, opts Options) (*Service, error) {
	if deps.Config == nil || deps.DB == nil {
		return nil, errors.New("security: a configuration and the primary data source are required")
	}
	s := &Service{cfg: deps.Config, logger: deps.Logger, now: deps.Clock, keys: &token.Keys{}, db: deps.DB, hideDepartments: opts.HideDepartments}
	if deps.Events != nil {
		s.signals = token.NewSignals(deps.Events, s.logger)
	}
	var sink EventSink
	switch {
	case deps.Events != nil:
		sink = EventSinks(BusSink(deps.Events, s.logger), opts.Events)
	case opts.Events != nil:
		sink = opts.Events
	default:
		sink = LogSink(s.logger)
	}
	counters, err := metricsSink(deps.Metrics)
	if err != nil {
		return nil, fmt.Errorf("security: metrics: %w", err)
	}
	if counters != nil {
		sink = EventSinks(counters, sink)
	}
	s.events = &emitter{sink: sink, now: s.now}
	s.feed = token.NewFeed(deps.DB, deps.KV, deps.Config.App.Name, s.now, s.logger)
	hasher := NewHasherBudget(opts.Hash, int64(deps.Config.Security.HashMemoryBudget))
	ext := s.extensions(deps, opts, hasher)
	s.directory = NewDirectory(deps.DB, s.now)
	if s.store != nil { // user changes, this server's and the feed's, go through store.forget
		s.directory.users = token.NewCache[*DirectoryUser](s.now)
		s.store.onChange = append(s.store.onChange, s.directory.users.Forget)
	}
	if err := s.buildTokens(deps, opts, ext); err != nil {
		return nil, err
	}
	if s.store != nil { // after the caches' own handlers: a hook reads the user afresh
		s.store.onChange = append(s.store.onChange, s.userChanged)
	}
	s.buildAuthenticators(opts, ext, hasher)
	if err := s.buildTrustLogin(deps, opts, ext); err != nil {
		return nil, err
	}
	s.buildGuard(deps, opts)
	s.buildChain(deps, opts, ext)
	s.challenges = &challengeTokens{signer: token.NewChallenges(s.keys, deps.Config.App.Name, s.now)}

	perms := NewRolePermissions(deps.Config.Security.Roles)
	s.permissions = opts.Permissions
	if s.permissions == nil {
		s.permissions = perms
	}
	s.userInfo = opts.UserInfo
	if s.userInfo == nil && s.store != nil {
		s.userInfo = &builtinUserInfo{store: s.store, perms: perms, menus: deps.Config.Security.Menus}
	}
	return s, nil
}

// Module lists what the module adds to the server.
func (s *Service) Module() app.Module {
	m := app.Module{
		Name:        "security",
		Resources:   []rpc.Resource{s.resource(), s.userResource(), s.sessionResource(), s.departmentResource()},
		Strategies:  s.strategies(),
		Messages:    Messages(),
		Migrations:  Migrations(),
		AutoMigrate: true,
		Start:       s.start,
		Workers: []app.Worker{
			{Name: "change_poll", Interval: ChangePollInterval, Run: s.feed.Poll},
			{Name: "change_purge", Interval: familyPurgeInterval, Run: s.feed.Purge},
		},
	}
	if s.feed.Relays() {
		m.Workers = append(m.Workers, app.Worker{Name: "change_subscribe", Run: s.feed.Subscribe})
	}
	if s.feed.Listens() {
		m.Workers = append(m.Workers, app.Worker{Name: "change_listen", Run: s.feed.Listen})
	}
	if s.jwt != nil {
		m.Workers = append(m.Workers, app.Worker{Name: "token_family_purge", Interval: familyPurgeInterval, Run: s.jwt.PurgeFamilies})
	}
	if s.sessions != nil {
		if _, inDB := s.sessions.store.(*dbSessions); inDB {
			m.Workers = append(m.Workers, app.Worker{Name: "session_purge", Interval: sessionPurgeInterval, Run: s.sessions.purge})
		}
	}
	if s.trust != nil {
		m.Routes = []app.Route{{Pattern: http.MethodGet + " " + s.cfg.Security.TrustLogin.Path, Handler: s.trust}}
	}
	return m
}

// strategies are the bearer (engine default), api_key, http_basic and ip strategies.
func (s *Service) strategies() []rpc.Strategy {
	sec := s.cfg.Security
	return []rpc.Strategy{&Bearer{Tokens: s.tokens}, NewAPIKeys(sec.APIKeys), NewHTTPBasic(sec.BasicAccounts), NewIPAllow(sec.IPWhitelists)}
}

// start loads the signing key (spec/README.md: no shipped secret), places the change feed at the
// newest change and tells the operator how to create the first user of an empty built-in store.
func (s *Service) start(ctx context.Context) error {
	key, generated, err := token.LoadSigningKey(ctx, s.cfg.Security.Secret, s.db, s.now())
	if err != nil {
		return fmt.Errorf("security: %w", err)
	}
	s.keys.Store(key)
	switch {
	case s.cfg.Security.Secret != "":
	case generated:
		s.logger.Info("svc.security.secret is not set: generated a signing secret and stored it in sys_security_secret; every node on this database uses it")
	default:
		s.logger.Info("svc.security.secret is not set: using the signing secret stored in sys_security_secret")
	}
	if err := s.feed.Start(ctx); err != nil {
		return err
	}
	if s.jwt != nil {
		if err := s.jwt.Start(ctx); err != nil {
			return err
		}
	}
	if s.store == nil {
		return nil
	}
	n, err := s.store.Count(ctx)
	if err != nil {
		return fmt.Errorf("security: count users: %w", err)
	}
	if n == 0 {
		s.logger.Warn("no users yet: create the first one with `svc user add NAME --roles admin` " +
			"(and give the role permissions in svc.security.roles, e.g. admin = [\"*\"])")
	}
	return nil
}

// logSink is the default EventSink: one info line per event.
type logSink struct{ logger *slog.Logger }

// LogSink returns the EventSink that logs each event at info level, every value cut by
// rpc.LogText (issue #11 item 7). It is the sink when the server has no event bus; a host can
// set it as Options.Events to log security events instead of publishing them.
func LogSink(logger *slog.Logger) EventSink { return logSink{logger} }

func (l logSink) Emit(ctx context.Context, e Event) {
	t := rpc.LogText // ids and the identifier may be the client's input (issue #11 item 7)
	l.logger.InfoContext(ctx, "security event", slog.String("event", e.Type), slog.String("principal", t(e.PrincipalID)),
		slog.String("identifier", t(e.Identifier)), slog.String("reason", t(e.Reason)), slog.String("client_ip", t(e.ClientIP)),
		slog.String("app", t(e.AppID)), slog.String("session", t(e.SessionID)))
}

package event

import (
	"fmt"
	"path"
	"slices"
	"sync"

	"github.com/svc-framework/svc/config"
)

// route is what the router resolved for one event type: the rule that matched and the
// transports for each use. Routes are cached per type.
type route struct {
	// rule names the matched rule for errors ("svc.event.routing[2] \"svc.storage.*\"") or the
	// default transport.
	rule string
	// names are the transports of the rule, in order.
	names []string
	// direct are the transports a plain publish writes to: all of names except the outbox sink
	// when the outbox is on the route (the relay delivers to the sink).
	direct []Transport
	// tx are the transactional transports of the route.
	tx []TxTransport
	// subscribe are the transports a subscription attaches to (names minus publish-only ones).
	subscribe []string
	// atLeastOnce: some transport of the route redelivers (outbox or kvstore_stream), so
	// subscribers need a group and get the inbox.
	atLeastOnce bool
	// sinkMissing: the outbox is on the route but its sink is not, so subscribers would never
	// receive what the relay forwards (ErrSinkMissing on Subscribe).
	sinkMissing bool
}

// router matches event types against svc.event.routing (wire-runtime §2.2): rules top to bottom,
// path.Match patterns, first match wins, no match → default_transport.
type router struct {
	rules      []config.EventRoute
	def        string
	sink       string
	transports map[string]Transport
	cache      sync.Map // event type → *route
}

// newRouter checks that every rule and the default transport name a transport that exists.
func newRouter(cfg config.Event, ts map[string]Transport) (*router, error) {
	r := &router{rules: cfg.Routing, def: cfg.DefaultTransport, sink: cfg.Transports.Outbox.Sink, transports: ts}
	if r.def == "" {
		r.def = config.TransportMemory
	}
	if _, ok := ts[r.def]; !ok {
		return nil, fmt.Errorf("svc.event.default_transport %q: %w", r.def, ErrTransportNotFound)
	}
	for i, rule := range cfg.Routing {
		if _, err := path.Match(rule.Pattern, ""); err != nil || rule.Pattern == "" || len(rule.Transports) == 0 {
			return nil, fmt.Errorf("%s: malformed rule: %w", r.ruleName(i), ErrTransportNotFound)
		}
		for _, name := range rule.Transports {
			if _, ok := ts[name]; !ok {
				return nil, fmt.Errorf("%s: transport %q: %w", r.ruleName(i), name, ErrTransportNotFound)
			}
		}
	}
	return r, nil
}

// ruleName names rule i as the operator wrote it: svc.event.routing[n] counting only the
// operator's rules, or the node-local route it is (WithLocalRoutes).
func (r *router) ruleName(i int) string {
	rule := r.rules[i]
	if rule.Local {
		return fmt.Sprintf("node-local route %q", rule.Pattern)
	}
	n := 0
	for _, prev := range r.rules[:i] {
		if !prev.Local {
			n++
		}
	}
	return fmt.Sprintf("svc.event.routing[%d] %q", n, rule.Pattern)
}

// resolve returns the route of eventType.
func (r *router) resolve(eventType string) *route {
	if v, ok := r.cache.Load(eventType); ok {
		return v.(*route)
	}
	rt := r.build(eventType)
	r.cache.Store(eventType, rt)
	return rt
}

func (r *router) build(eventType string) *route {
	rt := &route{rule: r.defaultRule(), names: []string{r.def}}
	for i, rule := range r.rules {
		if ok, _ := path.Match(rule.Pattern, eventType); ok {
			rt.rule = r.ruleName(i)
			rt.names = rule.Transports
			break
		}
	}
	hasOutbox := slices.Contains(rt.names, config.TransportOutbox)
	for _, name := range rt.names {
		t := r.transports[name]
		c := t.Capabilities()
		if c.AtLeastOnce {
			rt.atLeastOnce = true
		}
		if tt, ok := t.(TxTransport); ok && c.Transactional {
			rt.tx = append(rt.tx, tt)
		}
		if !(hasOutbox && name == r.sink) {
			rt.direct = append(rt.direct, t)
		}
		if !c.PublishOnly {
			rt.subscribe = append(rt.subscribe, name)
		}
	}
	rt.sinkMissing = hasOutbox && !slices.Contains(rt.names, r.sink)
	return rt
}

// RequireTransactional fails unless events of pattern (an event type, or a path.Match pattern
// such as "svc.storage.*" that the module's types all match) are routed to a transactional
// transport (outbox or tx_memory). Modules whose events must commit with their data (storage,
// approval; wire-runtime §2.2) call it at boot, so a wrong routing fails startup, naming the rule.
// A pattern that only the default transport covers fails with ErrNoRouteMatched when that
// transport is not transactional.
func (b *Bus) RequireTransactional(pattern string) error {
	rt := b.router.build(pattern) // a pattern is matched against the rules like a type
	if len(rt.tx) > 0 {
		return nil
	}
	if rt.rule == b.router.defaultRule() {
		return fmt.Errorf("no svc.event.routing rule covers %q and %s is not transactional: %w", pattern, rt.rule, ErrNoRouteMatched)
	}
	return fmt.Errorf("%s: events %q need outbox or tx_memory: %w", rt.rule, pattern, ErrTxRequired)
}

// defaultRule is the rule text of routes that no rule matched.
func (r *router) defaultRule() string { return fmt.Sprintf("svc.event.default_transport %q", r.def) }

// WithTransactionalRoutes returns cfg with a transactional route for each pattern that no rule
// of svc.event.routing covers: a last rule sending the pattern's events to the outbox and its
// sink (svc.event.transports.outbox.sink, default memory), with the outbox enabled. A rule the
// operator wrote is never overridden, so an explicit non-transactional rule still fails
// RequireTransactional at boot. cfg's routing is not modified.
//
// The patterns are the modules' declarations of the events they publish inside their own
// transactions (storage.EventPattern, approval.EventPattern); the composition root passes them
// when it builds the server. The outbox rather than tx_memory because host code adopts files
// (storage.Service.Adopt) inside its own transaction, which carries no TxScope: tx_memory
// refuses such a publish, the outbox writes its row through the transaction.
func WithTransactionalRoutes(cfg config.Event, patterns ...string) config.Event {
	routing := cfg.Routing
	for _, pattern := range patterns {
		if slices.ContainsFunc(cfg.Routing, func(r config.EventRoute) bool { ok, _ := path.Match(r.Pattern, pattern); return ok }) {
			continue
		}
		cfg.Transports.Outbox.Enabled = true
		if cfg.Transports.Outbox.Sink == "" {
			cfg.Transports.Outbox.Sink = config.TransportMemory
		}
		routing = append(slices.Clip(routing), config.EventRoute{Pattern: pattern, Transports: []string{config.TransportOutbox, cfg.Transports.Outbox.Sink}})
	}
	cfg.Routing = routing
	return cfg
}

// WithLocalRoutes returns cfg with a first rule sending each pattern's events to the memory
// transport only, ahead of every svc.event.routing rule. The patterns are the modules' signals
// that each node publishes for itself and only its own subscribers must see (token.SignalPattern:
// a revocation every node learns through the security change feed); a route with consumer
// groups (kvstore_stream, the outbox) would hand each to one node, and a rule the operator wrote
// for a wider pattern ("svc.security.*") must not do that. cfg's routing is not modified.
func WithLocalRoutes(cfg config.Event, patterns ...string) config.Event {
	routing := make([]config.EventRoute, 0, len(patterns)+len(cfg.Routing))
	for _, pattern := range patterns {
		routing = append(routing, config.EventRoute{Pattern: pattern, Transports: []string{config.TransportMemory}, Local: true})
	}
	cfg.Routing = append(routing, cfg.Routing...)
	return cfg
}

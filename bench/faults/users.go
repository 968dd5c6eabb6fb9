package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// User load (issue #45 item 5): a user is enabled, signs in on one node, opens a push socket on
// another and is seen on every node; then an admin disables it on a third. Once the change
// feed's reach (revocationFeed) has passed, every node must refuse the user's token and its
// socket must be closed, faults or not — unless the node could not read its database (the
// documented fail-open, counted apart).
//
// Before the disable, the user's roles change twice (issue #45 item 5): from admin to reader
// (which lacks security.user.query) and back, each on a random node. Once the feed's reach has
// passed, every node must apply the change — security/user find_page refused (403), then
// answered — and the socket must stay open (docs/push.md: a role change keeps it, with the
// new roles).

const (
	flipUser   = "flip"
	readerRole = "reader"
)

type userLoad struct {
	h  *harness
	id string
	mu sync.Mutex
	// refused: each (node, disable) probe; closed: each socket open when its user was disabled;
	// roles: each (node, role change) probe; kept: each socket open across two role changes.
	refused, closed, roles, kept *check
	failOpen                     int
}

func (l *userLoad) name() string { return "users" }

func (l *userLoad) setup(ctx context.Context) error {
	l.refused = newCheck("security.disabled_user_refused", 10)
	l.closed = newCheck("push.disabled_user_socket_closed", 3)
	l.roles = newCheck("security.role_change_applied", 10)
	l.kept = newCheck("push.role_change_socket_kept", 3)
	if err := l.h.c.addUser(flipUser, userPassword, "admin"); err != nil {
		return err
	}
	tok, _, _, err := l.h.c.login(ctx, l.h.c.nodes[0], flipUser, userPassword)
	if err != nil {
		return err
	}
	var info struct {
		ID string `json:"id"`
	}
	if _, err := l.h.c.call(ctx, l.h.c.nodes[0], tok, "security/auth", "get_user_info", map[string]any{}, &info); err != nil {
		return err
	}
	l.id = info.ID
	return nil
}

func (l *userLoad) node(rng *rand.Rand) *node { return l.h.c.nodes[rng.IntN(len(l.h.c.nodes))] }

// admin calls a security/user operation on the user, retried until answered.
func (l *userLoad) admin(ctx context.Context, rng *rand.Rand, action string) error {
	return l.adminWith(ctx, rng, action, map[string]any{"id": l.id})
}

// adminWith is admin with the operation's parameters.
func (l *userLoad) adminWith(ctx context.Context, rng *rand.Rand, action string, params map[string]any) error {
	var err error
	for attempt := 0; attempt < 20 && ctx.Err() == nil; attempt++ {
		n := l.node(rng)
		start := time.Now()
		var st int
		st, err = l.h.c.call(ctx, n, l.h.admin, "security/user", action, params, nil)
		l.op(ctx, "users."+action, n, start, st, err)
		if err == nil {
			return nil
		}
		sleep(ctx, 500*time.Millisecond)
	}
	return err
}

// op records an operation unless the loaded phase is over (its end cancels what is in flight).
func (l *userLoad) op(ctx context.Context, kind string, n *node, start time.Time, st int, err error) {
	if ctx.Err() == nil {
		l.h.rec.op(kind, n, start, st, err)
	}
}

// run flips the user until ctx ends.
func (l *userLoad) run(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		l.cycle(ctx, rng)
		sleep(ctx, time.Second)
	}
}

func (l *userLoad) cycle(ctx context.Context, rng *rand.Rand) {
	if l.admin(ctx, rng, "enable") != nil {
		return
	}
	n := l.node(rng)
	start := time.Now()
	tok, _, st, err := l.h.c.login(ctx, n, flipUser, userPassword)
	l.op(ctx, "users.login", n, start, st, err)
	if err != nil {
		return
	}
	// Every node learns the user (its caches hold it) before the disable.
	for _, n := range l.h.c.nodes {
		start := time.Now()
		st, err := l.h.c.call(ctx, n, tok, "security/auth", "get_user_info", map[string]any{}, nil)
		l.op(ctx, "users.user_info", n, start, st, err)
	}
	sock := l.h.c.nodes[rng.IntN(len(l.h.c.nodes))]
	closedAt := make(chan time.Time, 1)
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	conn, _, err := websocket.Dial(dctx, "ws"+sock.url()[len("http"):]+"/ws", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}})
	cancel()
	opened := time.Now()
	if err == nil {
		defer conn.CloseNow()
		go func() {
			for {
				if _, _, err := conn.Read(context.Background()); err != nil {
					closedAt <- time.Now()
					return
				}
			}
		}()
	}
	for _, roles := range [][]string{{readerRole}, {"admin"}} {
		if l.adminWith(ctx, rng, "set_roles", map[string]any{"id": l.id, "roles": roles}) != nil {
			return
		}
		changed := time.Now()
		sleep(ctx, revocationFeed)
		if ctx.Err() != nil {
			return
		}
		for _, n := range l.h.c.nodes {
			l.probeRoles(ctx, n, tok, roles[0] == "admin", changed)
		}
	}
	if conn != nil {
		select {
		case at := <-closedAt:
			l.judgeKept(sock, opened, at)
			conn = nil // gone: the disable below judges the tokens only
		default:
			l.judgeKept(sock, opened, time.Time{})
		}
	}
	if l.admin(ctx, rng, "disable") != nil {
		return
	}
	disabled := time.Now()
	sleep(ctx, revocationFeed)
	if ctx.Err() != nil {
		return
	}
	for _, n := range l.h.c.nodes {
		l.probe(ctx, n, tok, disabled)
	}
	if conn == nil {
		return
	}
	// The socket's node closes it when it hears of the disable (within the feed's reach, plus
	// a second for the close to travel).
	select {
	case at := <-closedAt:
		l.judgeSocket(sock, disabled, at)
	case <-time.After(time.Second):
		l.judgeSocket(sock, disabled, time.Time{})
	}
}

// probe presents the disabled user's token to n.
func (l *userLoad) probe(ctx context.Context, n *node, tok string, disabled time.Time) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	st, err := l.h.c.call(cctx, n, tok, "security/auth", "get_user_info", map[string]any{}, nil)
	if ctx.Err() != nil {
		return
	}
	l.h.rec.op("users.disabled_probe", n, start, st, nil)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refused.checked++
	if err != nil {
		return
	}
	if _, down := l.h.rec.storeDown(n, start, false); down {
		l.failOpen++
		return
	}
	l.refused.fail("%s accepted at %.1fs the token of a user disabled at %.1fs", n.proc.name, start.Sub(l.h.rec.began).Seconds(), disabled.Sub(l.h.rec.began).Seconds())
}

// probeRoles presents the user's token to n for security/user find_page, which its roles allow
// (admin) or not (reader), a role change made at changed.
func (l *userLoad) probeRoles(ctx context.Context, n *node, tok string, allowed bool, changed time.Time) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	st, err := l.h.c.call(cctx, n, tok, "security/user", "find_page", map[string]any{}, nil)
	if ctx.Err() != nil {
		return
	}
	l.h.rec.op("users.role_probe", n, start, st, nil)
	if st == 0 || st >= 500 {
		return // no answer (the node stopped or cut): nothing to judge
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roles.checked++
	if (err == nil) == allowed {
		return
	}
	if _, down := l.h.rec.storeDown(n, start, false); down {
		l.failOpen++
		return
	}
	want := "refused"
	if allowed {
		want = "answered"
	}
	l.roles.fail("%s at %.1fs: find_page not %s (HTTP %d) for a user whose roles changed at %.1fs: %v", n.proc.name, start.Sub(l.h.rec.began).Seconds(),
		want, st, changed.Sub(l.h.rec.began).Seconds(), err)
}

// judgeKept checks that the socket on n, opened at opened, is still open after two role changes
// (at is when it closed, zero if it did not), unless a fault on its node (or on the database or
// Redis every node needs) closed it.
func (l *userLoad) judgeKept(n *node, opened, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kept.checked++
	if at.IsZero() || l.h.rec.hit(opened, at, n.id, "pause", "kill", "dbcut", "rediscut", "upgrade") || l.h.rec.hit(opened, at, -1, "redisrestart", "dbrestart") {
		return
	}
	l.kept.fail("%s: the socket of a user whose roles changed closed at %.1fs", n.proc.name, at.Sub(l.h.rec.began).Seconds())
}

// judgeSocket checks that the socket on n closed within the feed's reach of the disable (at is
// zero when it stayed open).
func (l *userLoad) judgeSocket(n *node, disabled, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed.checked++
	if !at.IsZero() && at.Sub(disabled) <= revocationFeed+time.Second {
		return
	}
	if _, down := l.h.rec.storeDown(n, disabled, false); down || l.h.rec.hit(disabled, time.Now(), n.id, "pause", "kill", "rediscut", "upgrade") || l.h.rec.hit(disabled, time.Now(), -1, "redisrestart", "dbrestart") {
		// The node could not hear of the disable (its database or Redis unreachable, or it was
		// stopped): its caches catch up when it recovers.
		l.failOpen++
		return
	}
	took := "still open"
	if !at.IsZero() {
		took = fmt.Sprintf("closed after %.1fs", at.Sub(disabled).Seconds())
	}
	l.closed.fail("%s: the socket of a user disabled at %.1fs is %s", n.proc.name, disabled.Sub(l.h.rec.began).Seconds(), took)
}

func (l *userLoad) check(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.h.rec.addCheck(*l.refused)
	l.h.rec.addCheck(*l.closed)
	l.h.rec.addCheck(*l.roles)
	l.h.rec.addCheck(*l.kept)
	l.h.rec.count("security.disabled_user_store_down", "disabled users' tokens accepted, or sockets left open, while their node could not hear of it (database or Redis unreachable, node stopped)", l.failOpen)
	return nil
}

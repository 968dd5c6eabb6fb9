package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// Clock skew (issue #45 item 5): one node (skewNode) runs with its clock off by -skew (±2 s, the
// sign drawn from the seed; docs/cron.md asks for NTP-synchronised nodes, and the token checks
// allow 10 s, security/token/jwt.go). Every load runs across it as across the others (its
// cron firings, its inbox leases, its token issue times); this load adds the one promise skew
// touches directly: a token issued on one node is accepted by every other at once, whichever of
// the two clocks is ahead — login on the skewed node and call another, or the reverse.

const (
	skewNode = 2
	skewUser = "skew"
)

type skewLoad struct {
	h    *harness
	skew time.Duration
	mu   sync.Mutex
	// accepted: each answered call with a token just issued on a node with another clock.
	accepted *check
}

func (l *skewLoad) name() string { return "skew" }

func (l *skewLoad) setup(context.Context) error {
	l.accepted = newCheck("security.token_accepted_across_skew", 20)
	return l.h.c.addUser(skewUser, userPassword, "admin")
}

// run signs in on one side of the skew and calls the other, every 500 ms until ctx ends.
func (l *skewLoad) run(ctx context.Context, rng *rand.Rand) {
	skewed := l.h.c.nodes[skewNode]
	for ctx.Err() == nil {
		other := l.h.c.nodes[rng.IntN(skewNode)]
		issuer, verifier := skewed, other
		if rng.IntN(2) == 0 {
			issuer, verifier = other, skewed
		}
		start := time.Now()
		tok, _, st, err := l.h.c.login(ctx, issuer, skewUser, userPassword)
		if ctx.Err() != nil {
			return
		}
		l.h.rec.op("skew.login", issuer, start, st, err)
		if err == nil {
			l.call(ctx, issuer, verifier, tok)
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

// call presents a token issued on issuer to verifier right away.
func (l *skewLoad) call(ctx context.Context, issuer, verifier *node, tok string) {
	start := time.Now()
	st, err := l.h.c.call(ctx, verifier, tok, "security/auth", "get_user_info", map[string]any{}, nil)
	if ctx.Err() != nil {
		return
	}
	l.h.rec.op("skew.cross_call", verifier, start, st, err)
	var ae *apiError
	refused := errors.As(err, &ae) && (ae.status == http.StatusUnauthorized || ae.status == http.StatusForbidden)
	if err != nil && !refused {
		return // unanswered or 5xx: judged with every other answer (check5xx)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepted.checked++
	if refused {
		l.accepted.fail("%s refused at %.1fs a token %s had just issued (node%d's clock off by %s): %v", verifier.proc.name,
			start.Sub(l.h.rec.began).Seconds(), issuer.proc.name, skewNode, l.skew, err)
	}
}

func (l *skewLoad) check(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.h.rec.addCheck(*l.accepted)
	return nil
}

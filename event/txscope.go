package event

import (
	"context"
	"database/sql"
	"sync"

	"github.com/svc-framework/svc/db"
	"github.com/uptrace/bun"
)

// TxScope collects what must happen after a transaction commits: tx_memory deliveries and the
// outbox relay's wake-up. The caller that owns the transaction creates it with NewTxScope (or
// uses Bus.RunInTx) and calls Commit after a successful commit or Discard after a rollback.
type TxScope struct {
	mu    sync.Mutex
	hooks []func(context.Context)
	done  bool
}

type scopeKey struct{}

// NewTxScope returns ctx carrying a new TxScope. Pass the returned context to the publishes made
// inside the transaction.
func NewTxScope(ctx context.Context) (context.Context, *TxScope) {
	s := &TxScope{}
	return context.WithValue(ctx, scopeKey{}, s), s
}

// ScopeFrom returns the TxScope of ctx, or nil.
func ScopeFrom(ctx context.Context) *TxScope {
	s, _ := ctx.Value(scopeKey{}).(*TxScope)
	return s
}

// AfterCommit registers fn to run at Commit. After Commit or Discard it is ignored.
func (s *TxScope) AfterCommit(fn func(context.Context)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.hooks = append(s.hooks, fn)
	}
}

// Commit runs the registered hooks in order, once. Call it only after the commit succeeded.
func (s *TxScope) Commit(ctx context.Context) {
	s.mu.Lock()
	hooks := s.hooks
	s.hooks, s.done = nil, true
	s.mu.Unlock()
	for _, fn := range hooks {
		fn(ctx)
	}
}

// Discard drops the registered hooks (the transaction rolled back).
func (s *TxScope) Discard() {
	s.mu.Lock()
	s.hooks, s.done = nil, true
	s.mu.Unlock()
}

// RunInTx runs fn in one transaction of d with a TxScope in fn's context: publish inside fn with
// InTx(tx) and that context. After the commit, tx_memory delivers and the local outbox relay
// wakes at once; after a rollback (fn's error or panic) nothing is delivered. opts may be nil.
func (b *Bus) RunInTx(ctx context.Context, d *db.DB, opts *sql.TxOptions, fn func(ctx context.Context, tx bun.Tx) error) error {
	ctx, scope := NewTxScope(ctx)
	err := d.RunInTx(ctx, opts, fn)
	if err != nil {
		scope.Discard()
		return err
	}
	scope.Commit(context.WithoutCancel(ctx))
	return nil
}

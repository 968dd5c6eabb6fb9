package event

import (
	"context"
	"sync"

	"github.com/svc-framework/svc/db"
	"github.com/uptrace/bun"
)

// TxScope collects what must happen after a transaction commits: tx_memory deliveries and the
// outbox relay's wake-up. The caller that owns the transaction creates it with NewTxScope (or
// uses Bus.RunInTx) and calls Commit after a successful commit or Discard after a rollback.
// A batching scope (Batch) also holds writes until Flush (see Defer).
type TxScope struct {
	mu     sync.Mutex
	hooks  []func(context.Context)
	done   bool
	batch  bool
	writes []Write
	keyed  map[any]Write
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

// RunInTx is the package function RunInTx (the bus itself plays no part in it).
func (b *Bus) RunInTx(ctx context.Context, d *db.DB, fn func(ctx context.Context, tx bun.Tx) error) error {
	return RunInTx(ctx, d, fn)
}

// RunInTx runs fn in one transaction of d with a batching TxScope in fn's context: publish
// inside fn with InTx(tx) and that context, and defer writes with the scope's Defer. The
// deferred writes and the outbox rows of fn's publishes are written by the scope's Flush after
// fn returns, before the commit. After the commit, tx_memory delivers and the local outbox relay
// wakes at once; after a rollback (fn's error or panic) nothing is delivered. The transaction
// is d.InTx's: db's isolation and SQLite writer policy.
func RunInTx(ctx context.Context, d *db.DB, fn func(ctx context.Context, tx bun.Tx) error) error {
	ctx, scope := NewTxScope(ctx)
	scope.Batch()
	err := d.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return scope.Flush(ctx, tx)
	})
	if err != nil {
		scope.Discard()
		return err
	}
	scope.Commit(context.WithoutCancel(ctx))
	return nil
}

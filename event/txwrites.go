package event

import (
	"context"
	"fmt"
	"github.com/svc-framework/svc/db"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// A Write is a statement left to a batching TxScope's Flush: a bun insert, update or delete
// query built on the transaction, rendered only when Flush runs, so it carries its model's
// values of that moment. A Write that renders nothing (no bytes appended) is skipped.
type Write interface {
	AppendQuery(gen schema.QueryGen, b []byte) ([]byte, error)
}

// Batch makes s hold the writes of the publishers that support it (the outbox's rows) and of
// its owner (Defer) until Flush. The owner of the transaction must then call Flush inside the
// transaction, after the last publish and before the commit; Bus.RunInTx does. A scope that
// does not batch (the default) has publishers write at once.
func (s *TxScope) Batch() {
	s.mu.Lock()
	s.batch = true
	s.mu.Unlock()
}

// Batching reports whether s holds writes until Flush.
func (s *TxScope) Batching() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.batch
}

// Defer leaves w to Flush; writes run in the order they were first deferred. With a non-nil
// key, only the first write deferred under key is kept, and it is returned (a publisher keeps
// one growing batch per transaction: the outbox's rows of every publish in one INSERT); a nil
// key always adds w. Defer on a scope that does not batch returns nil and keeps nothing.
func (s *TxScope) Defer(key any, w Write) Write {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.batch || s.done {
		return nil
	}
	if key != nil {
		if have, ok := s.keyed[key]; ok {
			return have
		}
		if s.keyed == nil {
			s.keyed = map[any]Write{}
		}
		s.keyed[key] = w
	}
	s.writes = append(s.writes, w)
	return w
}

// Flush runs the deferred writes through tx, in order, and forgets them (a later Defer starts
// a new batch). On PostgreSQL they go in one round trip: the statements joined into one
// simple-protocol exec, which runs them in order inside the transaction and stops at the first
// failure; elsewhere one statement each. An error fails the transaction: return it from the
// transaction's function.
func (s *TxScope) Flush(ctx context.Context, tx bun.IDB) error {
	s.mu.Lock()
	writes := s.writes
	s.writes, s.keyed = nil, nil
	s.mu.Unlock()
	if len(writes) == 0 {
		return nil
	}
	gen := tx.NewRaw("").DB().QueryGen()
	joined := db.MultiStatementExec(tx)
	var buf []byte
	for _, w := range writes {
		start := len(buf)
		if joined && start > 0 {
			buf = append(buf, ";\n"...)
		}
		out, err := w.AppendQuery(gen, buf)
		if err != nil {
			return fmt.Errorf("event: render deferred write: %w", err)
		}
		if len(out) == len(buf) {
			buf = buf[:start] // rendered nothing: drop the separator too
			continue
		}
		buf = out
		if !joined {
			if _, err := tx.ExecContext(ctx, string(buf)); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		if _, err := tx.ExecContext(ctx, string(buf)); err != nil {
			return err
		}
	}
	return nil
}

// Package memory is the in-process transports of the event bus (wire-runtime §2.3): memory and
// tx_memory (svc.event.transports.memory and .tx_memory). Each subscription has its own queue
// of queue_size drained by its concurrency workers, in order with one; a full queue follows
// full_policy (error: event.ErrQueueFull; block: wait up to publish_timeout; drop_oldest:
// discard the oldest, counted in the bus metrics). Handler errors are logged, never retried.
// tx_memory is the same transport marked transactional: a publish with event.InTx is delivered
// after the commit of the event.TxScope in the context, nothing on rollback
// (event.ErrTxScopeRequired without a scope). DeliverNow (event.Deliverer) runs the handlers in
// the caller's goroutine: the outbox relay uses it when memory is its sink.
//
// New and NewTx are their event.Factory functions, which package svc passes in
// event.Deps.Transports under "memory" and "tx_memory"; event.New builds them from svc.event.
// Neither has workers. Its tests (full policies, order and concurrency, tx_memory) publish
// through a bus.
package memory

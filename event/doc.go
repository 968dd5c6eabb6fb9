// Package event is the event bus of svc.event (spec §6.1, wire-runtime §2): publish and
// subscribe through routing rules over four transports — memory, tx_memory, outbox and
// kvstore_stream — with the recover, tracing, logging, metrics and inbox middleware.
//
// The full description (config keys, tables, workers, spec sections, choices) is in
// docs/events.md and below as it is completed.
package event

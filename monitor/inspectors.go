package monitor

import (
	"context"
	"time"
)

// StreamInspector reports the streams of the event bus's stream transport and their consumer
// groups (get_event_streams). The event bus implements it; the composition root passes it in
// Options, or nil when the stream transport is off. Feature modules do not import each other,
// so the implementation converts to these types (StreamInspectorFunc helps).
type StreamInspector interface {
	// InspectStreams reads the current state of every stream. An error answers 2101.
	InspectStreams(ctx context.Context) ([]StreamInfo, error)
}

// StreamInspectorFunc adapts a function to StreamInspector.
type StreamInspectorFunc func(ctx context.Context) ([]StreamInfo, error)

// InspectStreams calls f.
func (f StreamInspectorFunc) InspectStreams(ctx context.Context) ([]StreamInfo, error) { return f(ctx) }

// StreamInfo is one stream of the stream transport (wire-runtime §2.8).
type StreamInfo struct {
	// Stream is the full transport-level stream key (prefix and event type).
	Stream string `json:"stream"`
	// Length is the number of entries in the stream, after trimming.
	Length int64 `json:"length"`
	// Groups are the consumer groups attached to the stream.
	Groups []StreamGroupInfo `json:"groups"`
}

// StreamGroupInfo is one consumer group of a stream.
type StreamGroupInfo struct {
	// Name is the consumer group name.
	Name string `json:"name"`
	// Consumers counts the consumer records of the group, historical ones included.
	Consumers int64 `json:"consumers"`
	// Pending counts delivered entries not yet acknowledged.
	Pending int64 `json:"pending"`
	// Lag counts entries not yet delivered to the group (approximate; 0 where the server does
	// not report it).
	Lag int64 `json:"lag"`
	// LastDeliveredID is the stream ID of the last entry delivered to the group.
	LastDeliveredID string `json:"lastDeliveredId"`
}

// EventStreams is the answer of get_event_streams. Enabled is false, with no streams, when no
// StreamInspector is configured.
type EventStreams struct {
	Enabled bool         `json:"enabled"`
	Streams []StreamInfo `json:"streams"`
}

// StatsInspector reports the integration module's per-node invocation statistics
// (get_integration_stats). The integration module implements it; the composition root passes
// it in Options, or nil when the module is not included.
type StatsInspector interface {
	// InvocationStats returns one entry per (system, contract, direction) since process start,
	// ordered by system, contract and direction. Reading the counters cannot fail.
	InvocationStats() []InvocationStats
}

// StatsInspectorFunc adapts a function to StatsInspector.
type StatsInspectorFunc func() []InvocationStats

// InvocationStats calls f.
func (f StatsInspectorFunc) InvocationStats() []InvocationStats { return f() }

// InvocationStats are the counters of one (system, contract, direction) since process start
// (spec §2.5, wire-integration §4).
type InvocationStats struct {
	System    string `json:"system"`
	Contract  string `json:"contract"`  // "" for inbound deliveries rejected before routing
	Direction string `json:"direction"` // "outbound" or "inbound"
	Calls     int64  `json:"calls"`
	Successes int64  `json:"successes"`
	// Failures counts failed calls by failure kind; omitted when there were none.
	Failures      map[string]int64 `json:"failures,omitempty"`
	AvgDurationMs int64            `json:"avgDurationMs"`
	MaxDurationMs int64            `json:"maxDurationMs"`
	// LastError is the message of the latest failure; omitted when there was none.
	LastError string `json:"lastError,omitempty"`
	// LastErrorAt is the time of the latest failure (RFC 3339); omitted when there was none.
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
}

// IntegrationStats is the answer of get_integration_stats. Enabled is false, with no stats,
// when no StatsInspector is configured.
type IntegrationStats struct {
	Enabled bool              `json:"enabled"`
	Stats   []InvocationStats `json:"stats"`
}

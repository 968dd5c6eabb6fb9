package event

import (
	"context"

	"github.com/svc-framework/svc/config"
)

// StreamReport is the data of sys/monitor get_event_streams (wire-runtime §2.8).
type StreamReport struct {
	// Enabled is false when no stream transport is configured (then Streams is empty).
	Enabled bool `json:"enabled"`
	// Streams are the event streams, by key.
	Streams []StreamInfo `json:"streams"`
}

// StreamInfo is one stream.
type StreamInfo struct {
	// Stream is the key.
	Stream string `json:"stream"`
	// Length is XLEN.
	Length int64 `json:"length"`
	// Groups are its consumer groups.
	Groups []GroupInfo `json:"groups"`
}

// GroupInfo is one consumer group of a stream.
type GroupInfo struct {
	// Name is the group name.
	Name string `json:"name"`
	// Consumers counts consumer records, including those of stopped processes.
	Consumers int64 `json:"consumers"`
	// Pending counts delivered, unacknowledged entries.
	Pending int64 `json:"pending"`
	// Lag is the server's count of entries not yet delivered to the group (0 when unknown).
	Lag int64 `json:"lag"`
	// LastDeliveredID is the group's last delivered entry id.
	LastDeliveredID string `json:"lastDeliveredId"`
}

// InspectStreams reads the report of every stream under stream_prefix, read-only. Without the
// stream transport it returns {enabled: false, streams: []} and no error.
func (b *Bus) InspectStreams(ctx context.Context) (StreamReport, error) {
	if si, ok := b.transports[config.TransportKVStoreStream].(StreamInspector); ok {
		return si.InspectStreams(ctx)
	}
	return StreamReport{Streams: []StreamInfo{}}, nil
}

// OutboxCounts returns the number of sys_event_outbox rows per status (OutboxPending, ...,
// OutboxDead; statuses without rows are absent), for the metrics exporter. ok is false when the
// outbox transport is disabled.
func (b *Bus) OutboxCounts(ctx context.Context) (counts map[string]int64, ok bool, err error) {
	if _, ok := b.transports[config.TransportOutbox]; !ok {
		return nil, false, nil
	}
	var rows []struct {
		Status string `bun:"status"`
		N      int64  `bun:"n"`
	}
	err = b.deps.DB.NewSelect().TableExpr("sys_event_outbox").
		ColumnExpr("status").ColumnExpr("COUNT(*) AS n").GroupExpr("status").Scan(ctx, &rows)
	if err != nil {
		return nil, true, err
	}
	counts = make(map[string]int64, len(rows))
	for _, r := range rows {
		counts[r.Status] = r.N
	}
	return counts, true, nil
}

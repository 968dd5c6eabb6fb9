package kvstream

import (
	"context"
	"fmt"
	"sort"

	"github.com/svc-framework/svc/event"
)

// InspectStreams reads the report of every stream under stream_prefix, read-only (sys/monitor
// get_event_streams through Bus.InspectStreams; wire-runtime §2.8).
func (t *Transport) InspectStreams(ctx context.Context) (event.StreamReport, error) {
	keys, err := t.streamKeys(ctx)
	if err != nil {
		return event.StreamReport{}, err
	}
	sort.Strings(keys)
	report := event.StreamReport{Enabled: true, Streams: make([]event.StreamInfo, 0, len(keys))}
	for _, key := range keys {
		n, err := t.rdb.XLen(ctx, key).Result()
		if err != nil {
			return event.StreamReport{}, fmt.Errorf("event: inspect %s: %w", key, err)
		}
		groups, err := t.rdb.XInfoGroups(ctx, key).Result()
		if err != nil {
			return event.StreamReport{}, fmt.Errorf("event: inspect groups of %s: %w", key, err)
		}
		info := event.StreamInfo{Stream: key, Length: n, Groups: make([]event.GroupInfo, 0, len(groups))}
		for _, g := range groups {
			info.Groups = append(info.Groups, event.GroupInfo{Name: g.Name, Consumers: g.Consumers, Pending: g.Pending,
				Lag: max(g.Lag, 0), LastDeliveredID: g.LastDeliveredID})
		}
		report.Streams = append(report.Streams, info)
	}
	return report, nil
}

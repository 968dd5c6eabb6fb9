package push

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/kv"
	"github.com/svc-framework/svc/rpc"
)

// Relay frame kinds (wire-runtime §3.4).
const (
	relayMessage = "message"
	relayKick    = "kick_sessions"
)

// kickQueue bounds the kicks waiting to be published; when full a kick stays node-local and the
// other nodes' session recheck is the net (wire-runtime §3.4).
const kickQueue = 256

// relayPublishTimeout bounds one publish to Redis.
const relayPublishTimeout = 2 * time.Second

// relayFrame is one relay message on the channel.
type relayFrame struct {
	Kind       string          `json:"kind"`
	Origin     string          `json:"origin"`
	Envelope   json.RawMessage `json:"envelope,omitempty"`
	Targets    []Target        `json:"targets,omitempty"`
	SessionIDs []string        `json:"sessionIds,omitempty"`
}

// Channel returns the relay channel of cfg: svc:push:relay:<redis db>:<svc.app.name> (spec §6.2).
func Channel(cfg *config.Config) string {
	return fmt.Sprintf("svc:push:relay:%d:%s", cfg.KVStore.Database, cfg.App.Name)
}

// relay carries pushes and kicks between nodes over Redis publish/subscribe. Delivery is best
// effort: a failed publish is logged and the push stays node-local.
type relay struct {
	kv      *redis.Client
	channel string
	node    string
	local   localDeliverer
	log     *slog.Logger
	kicks   chan []string
}

// localDeliverer is what the relay does with frames from other nodes.
type localDeliverer interface {
	deliverLocal(frame []byte, targets []Target)
	KickLocal(keys ...string)
}

func newRelay(kv *redis.Client, channel, node string, local localDeliverer, log *slog.Logger) *relay {
	if node == "" {
		node = rpc.NewShortID()
	}
	return &relay{kv: kv, channel: channel, node: node, local: local, log: log, kicks: make(chan []string, kickQueue)}
}

// publishMessage relays an encoded message (the same bytes every node sends).
func (r *relay) publishMessage(ctx context.Context, frame []byte, targets []Target) {
	r.publish(ctx, relayFrame{Kind: relayMessage, Origin: r.node, Envelope: frame, Targets: targets})
}

// queueKick hands kicks to the publisher without blocking; a full queue drops them.
func (r *relay) queueKick(keys []string) {
	select {
	case r.kicks <- keys:
	default:
		r.log.Warn("push: relay kick queue full, kick stays on this node", slog.Int("sessions", len(keys)))
	}
}

// publishKicks publishes queued kicks until ctx ends (the push-relay-kicks loop worker).
func (r *relay) publishKicks(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case keys := <-r.kicks:
			r.publish(ctx, relayFrame{Kind: relayKick, Origin: r.node, SessionIDs: keys})
		}
	}
}

func (r *relay) publish(ctx context.Context, f relayFrame) {
	if err := publishFrame(ctx, r.kv, r.channel, f); err != nil {
		r.log.WarnContext(ctx, "push: relay publish failed, delivery stays on this node", slog.String("kind", f.Kind), slog.Any("error", err))
	}
}

// publishFrame publishes one relay frame.
func publishFrame(ctx context.Context, kv *redis.Client, channel string, f relayFrame) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), relayPublishTimeout)
	defer cancel()
	return kv.Publish(ctx, channel, b).Err()
}

// subscribe applies frames of other nodes until ctx ends (the push-relay loop worker; the
// runner restarts it after a back-off when Redis fails). Frames of this node, unknown kinds and
// malformed frames are ignored.
func (r *relay) subscribe(ctx context.Context) error {
	if err := kv.Listen(ctx, r.kv, r.channel, func(payload string) { r.apply([]byte(payload)) }); err != nil {
		return fmt.Errorf("push: relay: %w", err)
	}
	return nil
}

// apply handles one frame from the channel.
func (r *relay) apply(payload []byte) {
	var f relayFrame
	if err := json.Unmarshal(payload, &f); err != nil || f.Origin == r.node {
		return
	}
	switch f.Kind {
	case relayMessage:
		if len(f.Envelope) > 0 && validate(f.Targets) == nil {
			r.local.deliverLocal(f.Envelope, f.Targets)
		}
	case relayKick:
		r.local.KickLocal(f.SessionIDs...)
	}
}

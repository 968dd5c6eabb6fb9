package push

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// Send pushes msg from outside a server (the `svc push send` command): it publishes one relay
// frame that every running node delivers to its own connections. A separate process holds no
// sockets, so it needs svc.push.enabled (ErrDisabled) and the key-value store (kv nil:
// ErrRelayRequired); it returns the message's id.
func Send(ctx context.Context, cfg *config.Config, kv *redis.Client, msg Message, targets ...Target) (string, error) {
	if !cfg.Push.Enabled {
		return "", ErrDisabled
	}
	if kv == nil {
		return "", ErrRelayRequired
	}
	if cfg.App.Name == "" {
		return "", ErrAppNameRequired
	}
	if msg.Type == "" {
		return "", ErrTypeRequired
	}
	if err := validate(targets); err != nil {
		return "", err
	}
	now := time.Now()
	if msg.ID == "" {
		msg.ID = rpc.NewShortID()
	}
	frame, err := msg.encode(now)
	if err != nil {
		return "", err
	}
	f := relayFrame{Kind: relayMessage, Origin: "cli-" + rpc.NewShortID(), Envelope: frame, Targets: targets}
	return msg.ID, publishFrame(ctx, kv, Channel(cfg), f)
}

// SendKick closes the connections of opaque sessions on every running node from outside a
// server (`svc session revoke`): one kick_sessions relay frame. Without push or the key-value
// store it does nothing and returns nil: the nodes' session recheck closes them instead.
func SendKick(ctx context.Context, cfg *config.Config, kv *redis.Client, sessionIDs ...string) error {
	if !cfg.Push.Enabled || kv == nil || cfg.App.Name == "" || len(sessionIDs) == 0 {
		return nil
	}
	f := relayFrame{Kind: relayKick, Origin: "cli-" + rpc.NewShortID(), SessionIDs: sessionIDs}
	return publishFrame(ctx, kv, Channel(cfg), f)
}

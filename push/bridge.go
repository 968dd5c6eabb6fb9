package push

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
)

// bridgeGroup is the consumer group of bridge subscriptions on at-least-once transports: one
// node of the group gets each event and its push reaches the others through the relay.
const bridgeGroup = "svc.push.bridge"

// subscribeBridge subscribes one handler per svc.push.bridge entry.
func (s *Service) subscribeBridge(bus event.Subscriber, routes []config.PushBridge) error {
	if len(routes) == 0 {
		return nil
	}
	if bus == nil {
		return fmt.Errorf("svc.push.bridge needs the event bus")
	}
	for i, r := range routes {
		if _, err := bus.Subscribe(r.Event, s.bridgeHandler(r), event.WithGroup(bridgeGroup)); err != nil {
			return fmt.Errorf("svc.push.bridge[%d]: %w", i, err)
		}
	}
	return nil
}

// bridgeHandler turns each event of the route into a push. An event that selects no target
// (no static target and no user in its field) is dropped.
func (s *Service) bridgeHandler(r config.PushBridge) event.Handler {
	typ := r.Type
	if typ == "" {
		typ = r.Event
	}
	return func(ctx context.Context, env *event.Envelope) error {
		payload, err := eventJSON(env.Payload)
		if err != nil {
			s.log.WarnContext(ctx, "push: bridge cannot encode the event", slog.String("event", env.Type), slog.Any("error", err))
			return nil
		}
		targets := bridgeTargets(r, payload)
		if len(targets) == 0 {
			return nil
		}
		return s.Push(ctx, Message{Type: typ, Payload: payload}, targets...)
	}
}

// bridgeTargets are the route's static targets plus the users named by its payload field.
func bridgeTargets(r config.PushBridge, payload json.RawMessage) []Target {
	var targets []Target
	if r.Broadcast {
		targets = append(targets, Broadcast())
	}
	if len(r.Users) > 0 {
		targets = append(targets, ToUsers(r.Users...))
	}
	if len(r.Roles) > 0 {
		targets = append(targets, ToRoles(r.Roles...))
	}
	if r.UserField != "" {
		if users := payloadUsers(payload, r.UserField); len(users) > 0 {
			targets = append(targets, ToUsers(users...))
		}
	}
	return targets
}

// payloadUsers reads a top-level field holding a user id (string or number) or an array of them.
func payloadUsers(payload json.RawMessage, field string) []string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(payload, &fields) != nil {
		return nil
	}
	raw, ok := fields[field]
	if !ok {
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		list = []json.RawMessage{raw}
	}
	var out []string
	for _, v := range list {
		var id string
		if json.Unmarshal(v, &id) == nil {
			out = append(out, id)
			continue
		}
		var n json.Number
		if json.Unmarshal(v, &n) == nil {
			out = append(out, n.String())
		}
	}
	return out
}

// eventJSON is the event's payload as JSON: the body of an event that crossed a process, else
// the event value encoded.
func eventJSON(e event.Event) (json.RawMessage, error) {
	if raw, ok := e.(event.RawPayload); ok {
		return raw.Body, nil
	}
	if raw, ok := e.(*event.RawPayload); ok {
		return raw.Body, nil
	}
	return json.Marshal(e)
}

package approval

import (
	"context"

	"github.com/svc-framework/svc/event"
)

// Notifier delivers a message of type typ with payload to the open browser tabs of users. The
// push module's Service is one (push.Service.PushToUsers); the module declares the shape so it
// does not import another feature module (ARCHITECTURE.md, dependency direction).
type Notifier interface {
	PushToUsers(ctx context.Context, typ string, payload any, users ...string) error
}

// PushGroup is the consumer group of the module's push subscriptions: on a transport with
// groups one node forwards each event, and the push relay reaches every node's connections.
const PushGroup = "svc.approval.push"

// pushed maps the events forwarded to browser tabs to who receives them (wire-approval §10,
// issue #23 item 7). The message type is the event type; the payload is the event's.
var pushed = map[string]func(e *InstanceEvent) []string{
	EventTaskCreated: func(e *InstanceEvent) []string { return assigneeOf(e) },
	EventTaskUrged: func(e *InstanceEvent) []string {
		if e.Target != nil {
			return []string{e.Target.ID}
		}
		return nil
	},
	EventTaskDeadlineWarning: func(e *InstanceEvent) []string { return assigneeOf(e) },
	EventCCNotified: func(e *InstanceEvent) []string {
		ids := make([]string, len(e.Recipients))
		for i, r := range e.Recipients {
			ids[i] = r.ID
		}
		return ids
	},
}

func assigneeOf(e *InstanceEvent) []string {
	if e.Assignee != nil {
		return []string{e.Assignee.ID}
	}
	return nil
}

// subscribePush subscribes the push forwarding to Options.Notifier on the bus (at build time, as
// the bus requires); without a Notifier it subscribes nothing.
func (s *Service) subscribePush(bus event.PubSub) error {
	if s.notifier == nil {
		return nil
	}
	for typ, who := range pushed {
		who := who
		if _, err := bus.Subscribe(typ, func(ctx context.Context, env *event.Envelope) error {
			e, err := event.DecodePayload[InstanceEvent](env)
			if err != nil {
				return nil // not an instance event: nothing to push
			}
			users := dedupe(who(&e))
			if len(users) == 0 {
				return nil
			}
			return s.notifier.PushToUsers(ctx, env.Type, e, users...)
		}, event.WithGroup(PushGroup)); err != nil {
			return err
		}
	}
	return nil
}

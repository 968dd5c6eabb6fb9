package approval

import (
	"context"
	"encoding/json"

	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/push"
)

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

// notifierBox holds the push Notifier (set after the push module is built).
type notifierBox struct{ n push.Notifier }

// SetNotifier sets where the module pushes approval.task.created, approval.task.urged,
// approval.task.deadline_warning and approval.cc.notified to the recipients' open tabs. The
// composition root passes the push module's Notifier unless Options.Notifier is set; nil stops
// pushing.
func (s *Service) SetNotifier(n push.Notifier) {
	if n == nil {
		s.notifier.Store(nil)
		return
	}
	s.notifier.Store(&notifierBox{n})
}

// subscribePush subscribes the push forwarding on the bus (at build time, as the bus requires).
func (s *Service) subscribePush(bus event.PubSub) error {
	for typ, who := range pushed {
		who := who
		if _, err := bus.Subscribe(typ, func(ctx context.Context, env *event.Envelope) error {
			box := s.notifier.Load()
			if box == nil {
				return nil
			}
			e, ok := instanceEventOf(env.Payload)
			if !ok {
				return nil
			}
			users := dedupe(who(e))
			if len(users) == 0 {
				return nil
			}
			return box.n.Push(ctx, push.NewMessage(env.Type, e), push.ToUsers(users...))
		}, event.WithGroup(PushGroup)); err != nil {
			return err
		}
	}
	return nil
}

// instanceEventOf reads an InstanceEvent payload: the value itself in process (inside
// event.Named), its JSON after an outbox or stream hop (event.RawPayload).
func instanceEventOf(p any) (*InstanceEvent, bool) {
	if n, ok := p.(event.Named); ok {
		p = n.Payload
	}
	switch v := p.(type) {
	case InstanceEvent:
		return &v, true
	case *InstanceEvent:
		return v, true
	case event.RawPayload:
		var e InstanceEvent
		if json.Unmarshal(v.Body, &e) != nil {
			return nil, false
		}
		return &e, true
	}
	b, err := json.Marshal(p)
	var e InstanceEvent
	if err != nil || json.Unmarshal(b, &e) != nil {
		return nil, false
	}
	return &e, true
}

package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"time"
)

// Pushes to one user (issue #45 item 5): the approval module forwards approval.task.created to
// the task's assignee (group svc.approval.push, push.PushToUsers: delivered on the handling
// node and relayed through Redis to the others). One approval user keeps a socket open on every
// node; each of its task pushes must reach every one of those sockets once: never again after
// the inbox marked the event handled (as events.push_once_per_socket), and not missing from a
// socket that was open around the time another of the user's sockets received it, unless a
// fault explains it (its node stopped or cut, or Redis, which relays it, restarted or cut from
// any node: push is best effort across those, docs/push.md).

const taskCreatedPush = "approval.task.created"

// userPushSettle is how long after one socket received a push the user's other sockets have to
// receive it too, and how long before it a socket must have been open (a new socket receives
// nothing until its first check has passed, docs/push.md).
const userPushSettle = 2 * time.Second

type userPushLoad struct {
	h  *harness
	al *approvalLoad
	mu sync.Mutex
	// frames per node: "approval.task.created taskId" → arrivals; open: per node, the spans the
	// socket was open.
	frames []map[string][]time.Time
	open   [][2]time.Time
	openOn []int
}

func (l *userPushLoad) name() string { return "userpush" }

func (l *userPushLoad) setup(context.Context) error {
	for range l.h.c.nodes {
		l.frames = append(l.frames, map[string][]time.Time{})
	}
	return nil
}

// run keeps one socket of the first approval user open on every node until ctx ends.
func (l *userPushLoad) run(ctx context.Context, _ *rand.Rand) { l.h.socketPerNode(ctx, l.listen) }

func (l *userPushLoad) listen(ctx context.Context, i int, n *node) {
	conn := l.h.dialPush(ctx, n, l.al.users[0].token, "push.user_connect")
	if conn == nil {
		return
	}
	opened := time.Now()
	defer func() {
		conn.CloseNow()
		l.mu.Lock()
		l.open = append(l.open, [2]time.Time{opened, time.Now()})
		l.openOn = append(l.openOn, i)
		l.mu.Unlock()
	}()
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var f struct {
			Type    string `json:"type"`
			Payload struct {
				TaskID string `json:"taskId"`
			} `json:"payload"`
		}
		if json.Unmarshal(data, &f) != nil || f.Type != taskCreatedPush {
			continue
		}
		l.mu.Lock()
		k := taskCreatedPush + " " + f.Payload.TaskID
		l.frames[i][k] = append(l.frames[i][k], time.Now())
		l.mu.Unlock()
	}
}

// openAround reports whether node i's socket was open from userPushSettle before t to
// userPushSettle after it. Called with l.mu held.
func (l *userPushLoad) openAround(i int, t time.Time) bool {
	for k, s := range l.open {
		if l.openOn[k] == i && !s[0].After(t.Add(-userPushSettle)) && !s[1].Before(t.Add(userPushSettle)) {
			return true
		}
	}
	return false
}

// check runs after the events load drained the outbox and the inbox.
func (l *userPushLoad) check(ctx context.Context) error {
	user := l.al.users[0].id
	rows, err := l.h.db.QueryContext(ctx, l.h.c.db.q("SELECT event_id, payload FROM sys_event_outbox WHERE event_type = ?"), taskCreatedPush)
	if err != nil {
		return err
	}
	eventOf := map[string]string{} // push key → event id, of the user's tasks
	for rows.Next() {
		var id string
		var payload []byte
		if err := rows.Scan(&id, &payload); err != nil {
			rows.Close()
			return err
		}
		var p struct {
			TaskID   string `json:"taskId"`
			Assignee *struct {
				ID string `json:"id"`
			} `json:"assignee"`
		}
		if json.Unmarshal(payload, &p) == nil && p.Assignee != nil && p.Assignee.ID == user {
			eventOf[taskCreatedPush+" "+p.TaskID] = id
		}
	}
	rows.Close()
	completedAt := map[string]time.Time{}
	rows, err = l.h.db.QueryContext(ctx, l.h.c.db.q("SELECT event_id, completed_at FROM sys_event_inbox WHERE consumer_group = ? AND completed_at IS NOT NULL"), "svc.approval.push")
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			rows.Close()
			return err
		}
		completedAt["svc.approval.push "+id] = at
	}
	rows.Close()
	lost := map[string][]int{}
	for i := range l.h.c.nodes {
		lines, err := l.h.c.loggedIDs(i, inboxLeaseLost)
		if err != nil {
			return err
		}
		for _, ll := range lines {
			lost[ll.id] = append(lost[ll.id], i)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	once := l.h.checkPushRepeats("push.user_push_once_per_socket", "push.user_", "svc.approval.push", l.frames, eventOf, completedAt, lost)
	reach := newCheck("push.user_push_reaches_every_node", 20)
	missedInFault, seen := 0, 0
	for k := range eventOf {
		var first time.Time
		for i := range l.frames {
			if ts := l.frames[i][k]; len(ts) > 0 && (first.IsZero() || ts[0].Before(first)) {
				first = ts[0]
			}
		}
		if first.IsZero() {
			continue // reached no socket of the user: not published while one was open (best effort)
		}
		seen++
		for i, n := range l.h.c.nodes {
			if !l.openAround(i, first) {
				continue
			}
			reach.checked++
			ts := l.frames[i][k]
			if len(ts) > 0 && !ts[0].After(first.Add(userPushSettle)) {
				continue
			}
			// The relay reconnects after a Redis fault with a back-off: 10 s before is the margin.
			if l.h.rec.hit(first.Add(-3*time.Second), first.Add(userPushSettle), n.id, "pause", "kill", "dbcut", "upgrade") ||
				l.h.rec.hit(first.Add(-10*time.Second), first.Add(userPushSettle), -1, "redisrestart", "rediscut") {
				missedInFault++
				continue
			}
			reach.fail("%s's socket of %s, open throughout, did not receive %s within %s of another socket of the user (at %.1fs)",
				n.proc.name, l.al.users[0].name, k, userPushSettle, first.Sub(l.h.rec.began).Seconds())
		}
	}
	l.h.rec.addCheck(*once)
	l.h.rec.addCheck(*reach)
	l.h.rec.count("push.user_push_missed_in_fault", "a user's pushes missing from one of its open sockets while a fault stopped its node or Redis (push is best effort)", missedInFault)
	l.h.log("userpush: %d task pushes to %s committed, %d reached a socket, %d socket deliveries judged", len(eventOf), l.al.users[0].name, seen, reach.checked)
	return nil
}

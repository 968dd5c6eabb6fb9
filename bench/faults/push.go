package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Push load: one WebSocket per node, reconnected whenever it drops. The run bridges
// svc.storage.file.uploaded (outbox → stream → one node's bridge → the Redis relay → every
// node) to a broadcast push of type "uploaded", so every completed upload should reach every
// socket. Push is best effort (docs/push.md): a frame sent while a socket was down or Redis
// restarting is lost, so the checks are that nothing arrives that did not happen and that no
// socket sees one frame twice; the share delivered is reported.

type pushLoad struct {
	h  *harness
	ul *uploadLoad
	mu sync.Mutex
	// frames per node: frame id → count, and the file keys received.
	ids  []map[string]int
	keys []map[string]int
	// apv: bridged frames per node: "type instanceId" (approval) or "uploaded fileKey" →
	// arrival times; refs: business references named by any approval frame.
	apv  []map[string][]time.Time
	refs map[string]int
}

func (l *pushLoad) name() string { return "push" }

func (l *pushLoad) setup(context.Context) error {
	for range l.h.c.nodes {
		l.ids = append(l.ids, map[string]int{})
		l.keys = append(l.keys, map[string]int{})
		l.apv = append(l.apv, map[string][]time.Time{})
	}
	l.refs = map[string]int{}
	return nil
}

// run keeps every node's socket open until ctx ends.
func (l *pushLoad) run(ctx context.Context, _ *rand.Rand) { l.h.socketPerNode(ctx, l.listen) }

// socketPerNode runs listen for every node, again half a second after each return, until ctx
// ends: each load that watches pushes keeps one socket open on every node this way.
func (h *harness) socketPerNode(ctx context.Context, listen func(ctx context.Context, i int, n *node)) {
	var wg sync.WaitGroup
	for i, n := range h.c.nodes {
		wg.Go(func() {
			for ctx.Err() == nil {
				listen(ctx, i, n)
				sleep(ctx, 500*time.Millisecond)
			}
		})
	}
	wg.Wait()
}

// dialPush opens a push socket on n with token, recorded as an operation of kind; nil when it
// could not.
func (h *harness) dialPush(ctx context.Context, n *node, token, kind string) *websocket.Conn {
	start := time.Now()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	conn, resp, err := websocket.Dial(dctx, "ws"+n.url()[len("http"):]+"/ws", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	cancel()
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	if ctx.Err() == nil {
		h.rec.op(kind, n, start, status, err)
	}
	if err != nil {
		return nil
	}
	return conn
}

// listen holds one connection until it fails or ctx ends.
func (l *pushLoad) listen(ctx context.Context, i int, n *node) {
	conn := l.h.dialPush(ctx, n, l.h.admin, "push.connect")
	if conn == nil {
		return
	}
	defer conn.CloseNow()
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var f struct {
			ID      string `json:"id"`
			Type    string `json:"type"`
			Payload struct {
				FileKey     string `json:"fileKey"`
				InstanceID  string `json:"instanceId"`
				BusinessRef string `json:"businessRef"`
			} `json:"payload"`
		}
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		if f.Type == apvCreatedPush || f.Type == apvCompletedPush {
			l.mu.Lock()
			k := f.Type + " " + f.Payload.InstanceID
			l.apv[i][k] = append(l.apv[i][k], time.Now())
			l.refs[f.Payload.BusinessRef]++
			l.mu.Unlock()
			continue
		}
		if f.Type != uploadPush {
			continue
		}
		l.mu.Lock()
		l.ids[i][f.ID]++
		l.keys[i][f.Payload.FileKey]++
		// Each push has a fresh frame id, so a repeat shows only by its file key: judged with the
		// approval pushes against the inbox (checkPushRepeats).
		k := uploadPush + " " + f.Payload.FileKey
		l.apv[i][k] = append(l.apv[i][k], time.Now())
		l.mu.Unlock()
	}
}

func (l *pushLoad) check(context.Context) error {
	completed := map[string]bool{}
	l.ul.mu.Lock()
	for _, u := range l.ul.completed {
		completed[u.key] = true
	}
	l.ul.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	phantom := newCheck("push.frame_names_a_completed_upload", 3)
	dup := newCheck("push.frame_once_per_socket", 3)
	for i := range l.h.c.nodes {
		for key, c := range l.keys[i] {
			phantom.checked += c
			if !completed[key] {
				phantom.fail("node%d received an upload push for %q, which no client completed", i, key)
			}
		}
		for id, c := range l.ids[i] {
			dup.checked++
			if c > 1 {
				dup.fail("node%d's socket received frame %s %d times", i, id, c)
			}
		}
		l.h.log("push: node%d's sockets saw %d of %d completed uploads", i, len(l.keys[i]), len(completed))
	}
	l.h.rec.addCheck(*phantom)
	l.h.rec.addCheck(*dup)
	return nil
}

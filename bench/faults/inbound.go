package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Inbound integration load: deliveries POSTed to the integration gateway of every node
// (/integration/inbound/FAULTS/svc.echo, bearer-authenticated, no /api token), each with its own
// delivery id; the inbound adapter dispatches the body to the binary's svc.echo handler, which
// answers it back. The invocation log records every delivery (log.mode = all).
//
// Like a partner, the load retries (issue #45 item 4): a delivery that was not accepted (no
// answer, or not 200 with its echo) is sent again, the same body, to a random node, up to
// inboundAttempts times; and one accepted delivery in eight is sent once more (the partner lost
// the answer). The gateway keeps no delivery id: each attempt that reaches it is an invocation
// with its own log row (docs/integration.md: vendors retry, handlers must be idempotent). So
// a delivery accepted a times out of n attempts sent must have between a and n rows.

// inboundAttempts is how many times the load sends one delivery at most.
const inboundAttempts = 4

const (
	inboundSystem = "FAULTS"
	inboundToken  = "faults-inbound-token"
)

type inboundLoad struct {
	h  *harness
	mu sync.Mutex
	// sent: delivery id → attempts sent; accepted: → attempts accepted (200 with its echo).
	sent, accepted map[string]int
	// by: delivery id → each attempt's node and time.
	by  map[string][]sentTo
	seq int
}

type sentTo struct {
	node       int
	start, end time.Time
}

// logInsertFailed is what the gateway logs when it could not write a delivery's invocation log
// row (integration/recorder.go: "a failed insert is only logged").
const logInsertFailed = "integration: invocation log insert failed"

func (l *inboundLoad) setup(ctx context.Context) error {
	l.sent, l.accepted, l.by = map[string]int{}, map[string]int{}, map[string][]sentTo{}
	admin, n := l.h.admin, l.h.c.nodes[0]
	var contract, system struct {
		ID string `json:"id"`
	}
	if _, err := l.h.c.call(ctx, n, admin, "integration/contract", "create", map[string]any{"code": "svc.echo", "name": "Echo",
		"inputSchema": map[string]any{"type": "object", "required": []string{"delivery"}}}, &contract); err != nil {
		return fmt.Errorf("integration contract: %w", err)
	}
	if _, err := l.h.c.call(ctx, n, admin, "integration/system", "create", map[string]any{"code": inboundSystem, "name": "Faults partner",
		"inboundAuth": map[string]any{"scheme": "bearer", "params": map[string]any{"token": inboundToken}}}, &system); err != nil {
		return fmt.Errorf("integration system: %w", err)
	}
	if _, err := l.h.c.call(ctx, n, admin, "integration/adapter", "create", map[string]any{"systemId": system.ID, "contractId": contract.ID,
		"direction": "inbound", "script": "return dispatch(JSON.parse(request.body))"}, nil); err != nil {
		return fmt.Errorf("integration adapter: %w", err)
	}
	return nil
}

// run delivers to a random node every 200 ms until ctx ends, retrying as a partner does.
func (l *inboundLoad) run(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		l.mu.Lock()
		l.seq++
		id := fmt.Sprintf("d%07d", l.seq)
		l.mu.Unlock()
		for attempt := 1; attempt <= inboundAttempts && ctx.Err() == nil; attempt++ {
			ok := l.attempt(ctx, rng, id)
			if ok && (attempt > 1 || rng.IntN(8) != 0) {
				break
			}
			if ok {
				attempt = inboundAttempts - 1 // the lost answer: one more send, then done
			}
			sleep(ctx, 500*time.Millisecond)
		}
		sleep(ctx, 200*time.Millisecond)
	}
}

// attempt sends delivery id once to a random node and records it; true when accepted.
func (l *inboundLoad) attempt(ctx context.Context, rng *rand.Rand, id string) bool {
	n := l.h.c.nodes[rng.IntN(len(l.h.c.nodes))]
	start := time.Now()
	st, err := l.deliver(ctx, n, id)
	if ctx.Err() != nil {
		// The loaded phase ended with it in flight: it may or may not have reached the gateway.
		l.mu.Lock()
		l.sent[id]++
		l.by[id] = append(l.by[id], sentTo{n.id, start, time.Now()})
		l.mu.Unlock()
		return false
	}
	l.h.rec.op("integration.inbound", n, start, st, err)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent[id]++
	l.by[id] = append(l.by[id], sentTo{n.id, start, time.Now()})
	if err == nil {
		l.accepted[id]++
	}
	return err == nil
}

// deliver posts one delivery; nil means accepted: 200 and the echo of the delivery.
func (l *inboundLoad) deliver(ctx context.Context, n *node, id string) (int, error) {
	body, _ := json.Marshal(map[string]string{"delivery": id})
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, n.url()+"/integration/inbound/"+inboundSystem+"/svc.echo", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+inboundToken)
	resp, err := l.h.c.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var echo struct {
		Delivery string `json:"delivery"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &echo) != nil || echo.Delivery != id {
		return resp.StatusCode, &apiError{status: resp.StatusCode, code: -1, msg: string(raw[:min(len(raw), 200)])}
	}
	return resp.StatusCode, nil
}

func (l *inboundLoad) name() string { return "integration" }

// check counts each delivery's rows in the invocation log.
func (l *inboundLoad) check(ctx context.Context) error {
	db := l.h.db
	// A delivery whose script failed before dispatching logs no input: its request body, in
	// the row's HTTP trace, names it then.
	rows, err := db.QueryContext(ctx, l.h.c.db.q("SELECT input, http_trace FROM itg_invocation_log WHERE system_code = ? AND direction = 'inbound'"), inboundSystem)
	if err != nil {
		return err
	}
	logged := map[string]int{}
	for rows.Next() {
		var in, trace []byte
		if err := rows.Scan(&in, &trace); err != nil {
			rows.Close()
			return err
		}
		var v struct {
			Delivery string `json:"delivery"`
		}
		_ = json.Unmarshal(in, &v)
		if v.Delivery == "" {
			var ex []struct {
				RequestBody string `json:"requestBody"`
			}
			if json.Unmarshal(trace, &ex) == nil && len(ex) > 0 {
				_ = json.Unmarshal([]byte(ex[0].RequestBody), &v)
			}
		}
		logged[v.Delivery]++
	}
	rows.Close()
	failed := make([][]time.Time, len(l.h.c.nodes))
	for i := range l.h.c.nodes {
		if failed[i], err = l.h.c.logged(i, logInsertFailed); err != nil {
			return err
		}
	}
	unlogged := 0
	once := newCheck("integration.accepted_logged_once", 20)
	twice := newCheck("integration.delivery_logged_at_most_once", 20)
	retried := newCheck("integration.retried_delivery_logged_per_attempt", 10)
	l.mu.Lock()
	defer l.mu.Unlock()
	accepted, retries := 0, 0
	for id, sent := range l.sent {
		acc, rows := l.accepted[id], logged[id]
		twice.checked++
		if rows > sent {
			twice.fail("delivery %s sent %d times, logged %d times", id, sent, rows)
		}
		if sent > 1 {
			retries++
			retried.checked++
		}
		if acc == 0 {
			continue
		}
		accepted++
		once.checked++
		if rows < acc && slices.ContainsFunc(l.by[id], func(b sentTo) bool {
			return slices.ContainsFunc(failed[b.node], func(t time.Time) bool {
				return !t.Before(b.start) && !t.After(b.end.Add(time.Second))
			})
		}) {
			unlogged++ // its node logged that a row could not be written: documented
			continue
		}
		if rows < acc {
			once.fail("delivery %s accepted %d times (of %d sent), logged %d times", id, acc, sent, rows)
			if sent > 1 {
				retried.fail("retried delivery %s accepted %d times (of %d sent), logged %d times", id, acc, sent, rows)
			}
		}
	}
	for id, sent := range l.sent {
		if sent > 1 && logged[id] > sent {
			retried.fail("retried delivery %s sent %d times, logged %d times", id, sent, logged[id])
		}
	}
	for id, n := range logged {
		if _, ok := l.sent[id]; !ok {
			twice.checked++
			twice.fail("log row of delivery %q (%d) that no client sent", id, n)
		}
	}
	l.h.rec.addCheck(*once)
	l.h.rec.addCheck(*twice)
	l.h.rec.addCheck(*retried)
	l.h.rec.count("integration.log_insert_failed", "accepted deliveries without a log row whose node logged the failed insert meanwhile (integration/recorder.go: a failed insert is only logged)", unlogged)
	rowsAll := 0
	for _, n := range logged {
		rowsAll += n
	}
	l.h.log("integration: %d deliveries sent (%d of them more than once), %d accepted, %d log rows", len(l.sent), retries, accepted, rowsAll)
	return nil
}

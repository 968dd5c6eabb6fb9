package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Approval load: a business-bound flow deployed through /api (start → approval A → approval B →
// end, each approver named by a form field), instances started by several users on random nodes
// and decided by their approvers on random nodes — approve, reject, rollback (to the previous
// node: from A the instance returns to its applicant), transfer — while a sweeper resubmits or
// withdraws returned instances. A share of the decisions is sent to two nodes at once (the same
// task decided twice concurrently). The binding is eventual: the approval-binding worker (leased,
// every node) writes each instance's state into the host table faults_order.
//
// Every eighth start names no approver for A: the engine publishes approval.instance.created
// in the start's transaction, then finds nobody for A (emptyAssigneeAction transfer_superior,
// no superior) and refuses the start with 40301, rolling the transaction back — the events
// check uses these as the published-then-rolled-back events.

const (
	apvUsers    = 4
	apvFlowCode = "faults-order"
	apvTable    = "faults_order"
	// errNoAssignee is approval's 40301: nobody to assign, the start is rolled back.
	errNoAssignee = 40301
)

// apvFlowDef is the deployed graph; rollback from a goes back to the start (the instance
// returns), from b back to a.
const apvFlowDef = `{"nodes":[{"id":"s","kind":"start","position":{"x":0,"y":0},"data":{"name":"Start"}},
 {"id":"a","kind":"approval","position":{"x":0,"y":1},"data":{"name":"A","emptyAssigneeAction":"transfer_superior",
   "assignees":[{"kind":"form_field","formField":"approver1","sortOrder":0}],"rollbackType":"previous"}},
 {"id":"b","kind":"approval","position":{"x":0,"y":2},"data":{"name":"B","emptyAssigneeAction":"transfer_superior",
   "assignees":[{"kind":"form_field","formField":"approver2","sortOrder":0}],"rollbackType":"previous"}},
 {"id":"e","kind":"end","position":{"x":0,"y":3},"data":{"name":"End"}}],
 "edges":[{"id":"e1","source":"s","target":"a"},{"id":"e2","source":"a","target":"b"},{"id":"e3","source":"b","target":"e"}]}`

type apvUser struct {
	name, token, id string
}

type approvalLoad struct {
	h     *harness
	db    *sql.DB
	users []apvUser
	// node is the persistent id of each designer node (s, a, b, e) of the published version.
	node   map[string]string
	byNode map[string]string // persistent id → designer key

	mu sync.Mutex
	// started: business ref → instance id, for starts answered with success.
	started map[string]string
	// refused: business refs of starts answered 40301 (rolled back).
	refused map[string]bool
	// decided: task id → decisions answered with success.
	decided map[string][]string
	// races counts tasks sent to two nodes at once, raceWins those where both answered success.
	races   int
	actions map[string]int
	seq     int
}

func apvUserName(i int) string { return fmt.Sprintf("apv%d", i) }

func (l *approvalLoad) name() string { return "approval" }

func (l *approvalLoad) setup(ctx context.Context) error {
	db := l.h.db
	l.db = db
	l.started, l.refused, l.decided, l.actions = map[string]string{}, map[string]bool{}, map[string][]string{}, map[string]int{}
	for i := range apvUsers {
		if err := l.h.c.addUser(apvUserName(i), userPassword, "admin"); err != nil {
			return err
		}
	}
	for i := range apvUsers {
		n := l.h.c.nodes[i%len(l.h.c.nodes)]
		tok, _, _, err := l.h.c.login(ctx, n, apvUserName(i), userPassword)
		if err != nil {
			return fmt.Errorf("login %s: %w", apvUserName(i), err)
		}
		var info struct {
			ID string `json:"id"`
		}
		if _, err := l.h.c.call(ctx, n, tok, "security/auth", "get_user_info", map[string]any{}, &info); err != nil {
			return err
		}
		l.users = append(l.users, apvUser{name: apvUserName(i), token: tok, id: info.ID})
	}
	// The host's table the binding writes into (its rows are the host's: the load inserts one
	// per business reference before starting the instance).
	ts := "timestamp NULL"
	if l.h.c.db.kind == "mysql" {
		ts = "datetime(3) NULL"
	}
	if _, err := db.Exec(fmt.Sprintf("CREATE TABLE %s (id varchar(64) NOT NULL PRIMARY KEY, status varchar(32), instance_id varchar(64), started_at %s, finished_at %s)", apvTable, ts, ts)); err != nil {
		return err
	}
	admin, n := l.h.admin, l.h.c.nodes[0]
	var cat, flow, version struct {
		ID string `json:"id"`
	}
	steps := []struct {
		resource, action string
		params           func() map[string]any
		out              any
	}{
		{"approval/category", "create", func() map[string]any {
			return map[string]any{"code": "faults", "name": "Faults", "sortOrder": 0, "isActive": true}
		}, &cat},
		{"approval/flow", "create", func() map[string]any {
			return map[string]any{"code": apvFlowCode, "name": "Faults order", "categoryId": cat.ID, "bindingMode": "business",
				"businessBinding": map[string]any{"tableName": apvTable, "keyColumns": []string{"id"}, "statusColumn": "status",
					"instanceIdColumn": "instance_id", "startedAtColumn": "started_at", "finishedAtColumn": "finished_at"},
				"isAllInitiationAllowed": true, "instanceTitleTemplate": ""}
		}, &flow},
		{"approval/flow", "deploy", func() map[string]any {
			return map[string]any{"flowId": flow.ID, "flowDefinition": json.RawMessage(apvFlowDef)}
		}, &version},
		{"approval/flow", "publish_version", func() map[string]any { return map[string]any{"versionId": version.ID} }, nil},
		{"approval/flow", "toggle_active", func() map[string]any { return map[string]any{"flowId": flow.ID, "isActive": true} }, nil},
	}
	for _, s := range steps {
		if _, err := l.h.c.call(ctx, n, admin, s.resource, s.action, s.params(), s.out); err != nil {
			return fmt.Errorf("%s %s: %w", s.resource, s.action, err)
		}
	}
	rows, err := db.Query(l.h.c.db.q("SELECT id, "+l.h.c.db.ident("key")+" FROM apv_flow_node WHERE flow_version_id = ?"), version.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	l.node, l.byNode = map[string]string{}, map[string]string{}
	for rows.Next() {
		var id, key string
		if err := rows.Scan(&id, &key); err != nil {
			return err
		}
		l.node[key], l.byNode[id] = id, key
	}
	if len(l.node) != 4 {
		return fmt.Errorf("the deployed version has %d nodes, want 4", len(l.node))
	}
	return rows.Err()
}

func (l *approvalLoad) rnode(rng *rand.Rand) *node { return l.h.c.nodes[rng.IntN(len(l.h.c.nodes))] }

// run starts instances, decides tasks and resubmits returned instances until ctx ends.
func (l *approvalLoad) run(ctx context.Context, rng *rand.Rand) {
	var wg sync.WaitGroup
	seeds := make([]uint64, apvUsers+2)
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}
	wg.Go(func() { l.starter(ctx, rand.New(rand.NewPCG(seeds[0], 7))) })
	wg.Go(func() { l.sweeper(ctx, rand.New(rand.NewPCG(seeds[1], 7))) })
	for i := range apvUsers {
		wg.Go(func() { l.decider(ctx, rand.New(rand.NewPCG(seeds[i+2], 7)), i) })
	}
	wg.Wait()
}

func (l *approvalLoad) op(ctx context.Context, kind string, n *node, start time.Time, st int, err error) {
	if ctx.Err() == nil {
		l.h.rec.op(kind, n, start, st, err)
	}
}

// starter starts an instance every 400 ms: applicant and approvers drawn at random.
func (l *approvalLoad) starter(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		l.mu.Lock()
		l.seq++
		ref := fmt.Sprintf("o%06d", l.seq)
		doomed := l.seq%8 == 0
		l.mu.Unlock()
		app := rng.IntN(apvUsers)
		form := map[string]any{"approver2": l.users[(app+1+rng.IntN(apvUsers-1))%apvUsers].id}
		if !doomed {
			form["approver1"] = l.users[(app+1+rng.IntN(apvUsers-1))%apvUsers].id
		}
		if _, err := l.db.Exec(l.h.c.db.q("INSERT INTO "+apvTable+" (id) VALUES (?)"), ref); err != nil {
			sleep(ctx, time.Second) // the database is down: the host could not take the order either
			continue
		}
		var inst struct {
			ID string `json:"id"`
		}
		start := time.Now()
		n := l.rnode(rng)
		st, err := l.h.c.call(ctx, n, l.users[app].token, "approval/instance", "start",
			map[string]any{"tenantId": "default", "flowCode": apvFlowCode, "businessRef": ref, "formData": form}, &inst)
		var ae *apiError
		refused := errors.As(err, &ae) && ae.code == errNoAssignee
		if refused {
			l.op(ctx, "approval.start", n, start, st, nil) // the expected refusal of a doomed start
		} else {
			l.op(ctx, "approval.start", n, start, st, err)
		}
		l.mu.Lock()
		switch {
		case err == nil:
			l.started[ref] = inst.ID
		case refused:
			l.refused[ref] = true
		}
		l.mu.Unlock()
		sleep(ctx, 400*time.Millisecond)
	}
}

type pendingTask struct {
	TaskID     string `json:"taskId"`
	InstanceID string `json:"instanceId"`
	NodeName   string `json:"nodeName"`
}

// decider works user i's pending tasks: each poll from a random node, each decision on a random
// node, a quarter of them sent to two nodes at once.
func (l *approvalLoad) decider(ctx context.Context, rng *rand.Rand, i int) {
	u := l.users[i]
	for ctx.Err() == nil {
		var page struct {
			Items []pendingTask `json:"items"`
		}
		start := time.Now()
		n := l.rnode(rng)
		st, err := l.h.c.call(ctx, n, u.token, "approval/my", "find_pending_tasks", map[string]any{"page": 1, "pageSize": 20}, &page)
		l.op(ctx, "approval.pending", n, start, st, err)
		if err != nil || len(page.Items) == 0 {
			sleep(ctx, 300*time.Millisecond)
			continue
		}
		t := page.Items[rng.IntN(len(page.Items))]
		params := map[string]any{"taskId": t.TaskID, "opinion": "faults"}
		switch r := rng.IntN(100); {
		case r < 55:
			params["action"] = "approve"
		case r < 65:
			params["action"] = "reject"
		case r < 80:
			params["action"] = "rollback"
			params["targetNodeId"] = l.node["s"]
			if t.NodeName == "B" {
				params["targetNodeId"] = l.node["a"]
			}
		default:
			params["action"] = "transfer"
			params["transferToId"] = l.users[(i+1+rng.IntN(apvUsers-1))%apvUsers].id
		}
		if rng.IntN(4) == 0 {
			// Two nodes decide the same task at once: at most one may succeed.
			a := rng.IntN(len(l.h.c.nodes))
			nodes := []*node{l.h.c.nodes[a], l.h.c.nodes[(a+1)%len(l.h.c.nodes)]}
			var wg sync.WaitGroup
			for _, n := range nodes {
				wg.Go(func() { l.decide(ctx, n, u, params) })
			}
			wg.Wait()
			l.mu.Lock()
			l.races++
			l.mu.Unlock()
		} else {
			l.decide(ctx, l.rnode(rng), u, params)
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// notPending is approval's 40202 (task not pending), the answer a losing concurrent decision
// gets; 40102 (instance completed) and 40203 (not the assignee after a transfer) are as valid.
var lostRace = map[int]bool{40202: true, 40102: true, 40203: true}

func (l *approvalLoad) decide(ctx context.Context, n *node, u apvUser, params map[string]any) {
	start := time.Now()
	st, err := l.h.c.call(ctx, n, u.token, "approval/instance", "process_task", params, nil)
	var ae *apiError
	if errors.As(err, &ae) && lostRace[ae.code] {
		l.op(ctx, "approval.decide", n, start, st, nil)
		return
	}
	l.op(ctx, "approval.decide", n, start, st, err)
	if err != nil {
		return
	}
	l.mu.Lock()
	id := params["taskId"].(string)
	l.decided[id] = append(l.decided[id], params["action"].(string)+"@"+n.proc.name)
	l.actions[params["action"].(string)]++
	l.mu.Unlock()
}

// sweeper resubmits (or now and then withdraws) the returned instances of every user.
func (l *approvalLoad) sweeper(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		for _, u := range l.users {
			var page struct {
				Items []struct {
					InstanceID string `json:"instanceId"`
				} `json:"items"`
			}
			start := time.Now()
			n := l.rnode(rng)
			st, err := l.h.c.call(ctx, n, u.token, "approval/my", "find_initiated", map[string]any{"status": "returned", "page": 1, "pageSize": 20}, &page)
			l.op(ctx, "approval.initiated", n, start, st, err)
			for _, it := range page.Items {
				action := "resubmit"
				if rng.IntN(4) == 0 {
					action = "withdraw"
				}
				start := time.Now()
				n := l.rnode(rng)
				st, err := l.h.c.call(ctx, n, u.token, "approval/instance", action, map[string]any{"instanceId": it.InstanceID}, nil)
				var ae *apiError
				if errors.As(err, &ae) && (ae.code == 40104 || ae.code == 40105) {
					err = nil // raced with another sweep of the same instance
				}
				l.op(ctx, "approval."+action, n, start, st, err)
				l.mu.Lock()
				if err == nil {
					l.actions[action]++
				}
				l.mu.Unlock()
			}
		}
		sleep(ctx, time.Second)
	}
}

// apvInstance is one instance row of the flow.
type apvInstance struct {
	id, status, ref string
	node            sql.NullString
	projection      sql.NullString
}

type apvLog struct {
	instance, action string
	node, task, to   sql.NullString
	at               time.Time
	id               string
}

// check verifies the approval invariants once the binding worker has drained.
func (l *approvalLoad) check(ctx context.Context) error {
	db := l.db
	// Drain: every projection applied (a worker that died holding a claim leaves it for the
	// projection lease, one minute).
	deadline := time.Now().Add(90 * time.Second)
	for {
		var left int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM apv_business_projection WHERE status <> 'applied'").Scan(&left); err != nil {
			return err
		}
		if left == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	insts := map[string]*apvInstance{}
	rows, err := db.QueryContext(ctx, l.h.c.db.q("SELECT id, status, COALESCE(business_ref, ''), current_node_id, business_projection_id FROM apv_instance WHERE flow_code = ?"), apvFlowCode)
	if err != nil {
		return err
	}
	for rows.Next() {
		i := &apvInstance{}
		if err := rows.Scan(&i.id, &i.status, &i.ref, &i.node, &i.projection); err != nil {
			rows.Close()
			return err
		}
		insts[i.id] = i
	}
	rows.Close()
	logs := map[string][]apvLog{}
	rows, err = db.QueryContext(ctx, l.h.c.db.q("SELECT l.instance_id, l.action, l.node_id, l.task_id, l.rollback_to_node_id, l.created_at, l.id FROM apv_action_log l JOIN apv_instance i ON i.id = l.instance_id WHERE i.flow_code = ? ORDER BY l.seq, l.created_at, l.id"), apvFlowCode)
	if err != nil {
		return err
	}
	for rows.Next() {
		var g apvLog
		if err := rows.Scan(&g.instance, &g.action, &g.node, &g.task, &g.to, &g.at, &g.id); err != nil {
			rows.Close()
			return err
		}
		logs[g.instance] = append(logs[g.instance], g)
	}
	rows.Close()

	// No task decided twice: by the answers the clients got, and by the action log.
	once := newCheck("approval.task_decided_once", 10)
	perTask := map[string]int{}
	for _, gs := range logs {
		for _, g := range gs {
			if g.task.Valid && decision[g.action] {
				perTask[g.task.String]++
			}
		}
	}
	l.mu.Lock()
	for id, ds := range l.decided {
		if _, ok := perTask[id]; !ok {
			perTask[id] = 0
		}
		if len(ds) > 1 {
			once.fail("task %s: %d decisions answered success: %v", id, len(ds), ds)
		}
	}
	l.mu.Unlock()
	for id, n := range perTask {
		once.checked++
		if n > 1 {
			once.fail("task %s: %d decision rows in the action log", id, n)
		}
	}
	l.h.rec.addCheck(*once)

	// Every instance in the state its action log explains.
	explained := newCheck("approval.state_explained_by_log", 10)
	for id, in := range insts {
		explained.checked++
		status, at, why := l.replay(logs[id])
		switch {
		case why != "":
			explained.fail("instance %s (%s): %s", id, in.status, why)
		case status != in.status:
			explained.fail("instance %s is %s, its log says %s", id, in.status, status)
		case status == "running" && (!in.node.Valid || l.byNode[in.node.String] != at):
			explained.fail("instance %s is running at %q, its log says at %s", id, l.byNode[in.node.String], at)
		}
	}
	l.h.rec.addCheck(*explained)

	// Every answered start is an instance; every refused one left nothing.
	answered := newCheck("approval.answered_start_committed", 10)
	byRef := map[string]*apvInstance{}
	for _, in := range insts {
		byRef[in.ref] = in
	}
	l.mu.Lock()
	for ref, id := range l.started {
		answered.checked++
		if in := byRef[ref]; in == nil || in.id != id {
			answered.fail("start of %s answered instance %s, which is not in apv_instance", ref, id)
		}
	}
	for ref := range l.refused {
		answered.checked++
		if in := byRef[ref]; in != nil {
			answered.fail("start of %s was refused (rolled back) but instance %s exists", ref, in.id)
		}
	}
	l.mu.Unlock()
	l.h.rec.addCheck(*answered)

	// The projection and the host table equal the instances.
	proj := newCheck("approval.projection_equals_instances", 10)
	type record struct {
		status, instance sql.NullString
	}
	recs := map[string]record{}
	rows, err = db.QueryContext(ctx, "SELECT id, status, instance_id FROM "+apvTable)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		var r record
		if err := rows.Scan(&id, &r.status, &r.instance); err != nil {
			rows.Close()
			return err
		}
		recs[id] = r
	}
	rows.Close()
	type projRow struct {
		owner, desired, status string
		desiredRev, appliedRev int64
	}
	projs := map[string]projRow{}
	rows, err = db.QueryContext(ctx, "SELECT id, owner_instance_id, desired_status, status, desired_revision, applied_revision FROM apv_business_projection")
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		var p projRow
		if err := rows.Scan(&id, &p.owner, &p.desired, &p.status, &p.desiredRev, &p.appliedRev); err != nil {
			rows.Close()
			return err
		}
		projs[id] = p
	}
	rows.Close()
	for _, in := range insts {
		proj.checked++
		r, ok := recs[in.ref]
		p, pok := projs[in.projection.String]
		switch {
		case !ok:
			proj.fail("instance %s: no record %s", in.id, in.ref)
		case !pok:
			proj.fail("instance %s: no projection row", in.id)
		case p.owner != in.id || p.desired != in.status || p.status != "applied" || p.appliedRev != p.desiredRev:
			proj.fail("instance %s (%s): projection owner %s desired %s %s, revision %d of %d applied", in.id, in.status, p.owner, p.desired, p.status, p.appliedRev, p.desiredRev)
		case r.instance.String != in.id || r.status.String != in.status:
			proj.fail("record %s holds %s/%s, instance %s is %s", in.ref, r.instance.String, r.status.String, in.id, in.status)
		}
	}
	for ref, r := range recs {
		if byRef[ref] == nil {
			proj.checked++
			if r.status.Valid || r.instance.Valid {
				proj.fail("record %s holds %s/%s but no instance names it", ref, r.instance.String, r.status.String)
			}
		}
	}
	l.h.rec.addCheck(*proj)

	statuses := map[string]int{}
	for _, in := range insts {
		statuses[in.status]++
	}
	l.mu.Lock()
	l.h.log("approval: %d instances %v, %d refused starts, decisions %v, %d tasks raced on two nodes", len(insts), statuses, len(l.refused), l.actions, l.races)
	l.mu.Unlock()
	return nil
}

// decision are the action-log actions that decide a task.
var decision = map[string]bool{"approve": true, "reject": true, "transfer": true, "rollback": true, "handle": true}

// replay walks an instance's action log through the flow and answers the status and node it
// leads to, or why a step cannot follow the one before.
func (l *approvalLoad) replay(gs []apvLog) (status, at, why string) {
	for k, g := range gs {
		node := l.byNode[g.node.String]
		step := fmt.Sprintf("step %d %s at %s", k, g.action, node)
		if k == 0 {
			if g.action != "submit" {
				return "", "", step + ": the log does not begin with submit"
			}
			status, at = "running", "a"
			continue
		}
		switch g.action {
		case "approve":
			if status != "running" || node != at {
				return "", "", fmt.Sprintf("%s while %s at %s", step, status, at)
			}
			if at == "a" {
				at = "b"
			} else {
				status, at = "approved", ""
			}
		case "reject":
			if status != "running" || node != at {
				return "", "", fmt.Sprintf("%s while %s at %s", step, status, at)
			}
			status, at = "rejected", ""
		case "transfer":
			if status != "running" || node != at {
				return "", "", fmt.Sprintf("%s while %s at %s", step, status, at)
			}
		case "rollback":
			if status != "running" || node != at {
				return "", "", fmt.Sprintf("%s while %s at %s", step, status, at)
			}
			switch l.byNode[g.to.String] {
			case "s":
				status, at = "returned", ""
			case "a":
				at = "a"
			default:
				return "", "", step + ": rollback to " + l.byNode[g.to.String]
			}
		case "withdraw":
			if status != "running" && status != "returned" {
				return "", "", fmt.Sprintf("%s while %s", step, status)
			}
			status, at = "withdrawn", ""
		case "resubmit":
			if status != "returned" && status != "withdrawn" {
				return "", "", fmt.Sprintf("%s while %s", step, status)
			}
			status, at = "running", "a"
		default:
			return "", "", step + ": an action the load never takes"
		}
	}
	if len(gs) == 0 {
		return "", "", "no action log"
	}
	return status, at, ""
}

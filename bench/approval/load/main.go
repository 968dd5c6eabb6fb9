// Command load is the client of bench/approval/run.sh: it drives a running `svc serve` through
// /api the way the original's approval pages do, and reports complete instances per second.
//
//	load -url URL -password PW -c C -d 20s -warmup 3s
//
// It logs in as bench-admin, bench-app and bench-u1 … bench-uC (users the script created with
// `svc user add`), creates a category and, per approver, a three-node flow bench-K (start →
// approval by bench-uK → end), deploys, publishes and activates it. Then C workers (each with its
// own approver, so a pending list holds only its worker's task) loop for warmup + d:
//
//	approval/instance start              as bench-app, flow bench-K
//	approval/my find_pending_tasks       as bench-uK: the one pending task, of that instance
//	approval/instance process_task       as bench-uK, approve: the instance ends approved
//
// Instances completed inside the window d count; their start-to-approved latency gives p50 and
// p99. Any answer other than code 0 stops the run with an error. Afterwards the admin list must
// count every completed instance approved and every pending list must be empty.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-framework/svc/bench/internal/latency"
)

// flowDef is the three-node flow; %s is the approver's user id.
const flowDef = `{"nodes":[{"id":"s","kind":"start","position":{"x":0,"y":0},"data":{"name":"Start"}},
 {"id":"a","kind":"approval","position":{"x":0,"y":1},"data":{"name":"Approve","assignees":[{"kind":"user","ids":[%q],"sortOrder":0}]}},
 {"id":"e","kind":"end","position":{"x":0,"y":2},"data":{"name":"End"}}],
 "edges":[{"id":"e1","source":"s","target":"a"},{"id":"e2","source":"a","target":"e"}]}`

// client posts envelopes to one server's /api.
type client struct {
	url  string
	http *http.Client
}

// call posts resource.action with params as token and decodes data into out (when non-nil);
// an answer other than HTTP 200 with code 0 is an error naming it.
func (c *client) call(token, resource, action string, params, out any) error {
	body, err := json.Marshal(map[string]any{"resource": resource, "action": action, "version": "v1", "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, c.url+"/api", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return fmt.Errorf("%s.%s: HTTP %d, undecodable answer: %w", resource, action, resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK || env.Code != 0 {
		return fmt.Errorf("%s.%s: HTTP %d code %d: %s", resource, action, resp.StatusCode, env.Code, env.Message)
	}
	if out != nil {
		return json.Unmarshal(env.Data, out)
	}
	return nil
}

// login answers the access token of a password login.
func (c *client) login(user, password string) (string, error) {
	var out struct {
		Tokens struct {
			AccessToken string `json:"accessToken"`
		} `json:"tokens"`
	}
	err := c.call("", "security/auth", "login", map[string]string{"type": "password", "principal": user, "credentials": password}, &out)
	return out.Tokens.AccessToken, err
}

// identity is a logged-in user: its token and its user id.
type identity struct {
	token, id string
}

func (c *client) identity(user, password string) (identity, error) {
	tok, err := c.login(user, password)
	if err != nil {
		return identity{}, fmt.Errorf("login %s: %w", user, err)
	}
	var info struct {
		ID string `json:"id"`
	}
	if err := c.call(tok, "security/auth", "get_user_info", map[string]any{}, &info); err != nil {
		return identity{}, err
	}
	return identity{token: tok, id: info.ID}, nil
}

// idOf is the id of a create/deploy answer.
type idOf struct {
	ID string `json:"id"`
}

// setUp creates the category and one active flow per approver, answering the flow codes.
func (c *client) setUp(admin identity, approvers []identity, run string) ([]string, error) {
	var cat idOf
	if err := c.call(admin.token, "approval/category", "create", map[string]any{"code": "bench-" + run, "name": "Bench", "sortOrder": 0, "isActive": true}, &cat); err != nil {
		return nil, err
	}
	codes := make([]string, len(approvers))
	for k, a := range approvers {
		codes[k] = fmt.Sprintf("bench-%s-%d", run, k+1)
		var flow, version idOf
		if err := c.call(admin.token, "approval/flow", "create", map[string]any{"code": codes[k], "name": codes[k], "categoryId": cat.ID,
			"bindingMode": "standalone", "isAllInitiationAllowed": true, "instanceTitleTemplate": ""}, &flow); err != nil {
			return nil, err
		}
		if err := c.call(admin.token, "approval/flow", "deploy", map[string]any{"flowId": flow.ID, "flowDefinition": json.RawMessage(fmt.Sprintf(flowDef, a.id))}, &version); err != nil {
			return nil, err
		}
		if err := c.call(admin.token, "approval/flow", "publish_version", map[string]any{"versionId": version.ID}, nil); err != nil {
			return nil, err
		}
		if err := c.call(admin.token, "approval/flow", "toggle_active", map[string]any{"flowId": flow.ID, "isActive": true}, nil); err != nil {
			return nil, err
		}
	}
	return codes, nil
}

// pending is find_pending_tasks' page.
type pending struct {
	Items []struct {
		TaskID     string `json:"taskId"`
		InstanceID string `json:"instanceId"`
	} `json:"items"`
	Total int `json:"total"`
}

// approved counts the approved instances (of every run on this database).
func (c *client) approved(admin identity) (int64, error) {
	var page struct {
		Total int64 `json:"total"`
	}
	err := c.call(admin.token, "approval/admin", "find_instances", map[string]any{"status": "approved", "page": 1, "pageSize": 1}, &page)
	return page.Total, err
}

// instance runs one instance of flow as applicant to its end, approved by approver.
func (c *client) instance(applicant, approver identity, flow string) error {
	var inst idOf
	if err := c.call(applicant.token, "approval/instance", "start", map[string]any{"flowCode": flow, "formData": map[string]any{}}, &inst); err != nil {
		return err
	}
	var p pending
	if err := c.call(approver.token, "approval/my", "find_pending_tasks", map[string]any{"page": 1, "pageSize": 10}, &p); err != nil {
		return err
	}
	if len(p.Items) != 1 || p.Items[0].InstanceID != inst.ID {
		return fmt.Errorf("find_pending_tasks after starting %s: %d items, want its one task", inst.ID, len(p.Items))
	}
	return c.call(approver.token, "approval/instance", "process_task", map[string]any{"taskId": p.Items[0].TaskID, "action": "approve"}, nil)
}

func main() {
	url := flag.String("url", "", "base URL of svc")
	password := flag.String("password", "", "password of the bench users")
	conc := flag.Int("c", 16, "concurrent workers, one approver (bench-u1 … bench-uC) each")
	dur := flag.Duration("d", 20*time.Second, "measured window")
	warm := flag.Duration("warmup", 3*time.Second, "warm-up before the window")
	flag.Parse()
	if *url == "" || *conc < 1 {
		log.Fatal("-url is required and -c must be at least 1")
	}
	c := &client{url: *url, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * *conc}, Timeout: 30 * time.Second}}
	admin, err := c.identity("bench-admin", *password)
	if err != nil {
		log.Fatal(err)
	}
	applicant, err := c.identity("bench-app", *password)
	if err != nil {
		log.Fatal(err)
	}
	users := make([]identity, *conc)
	for k := range users {
		if users[k], err = c.identity(fmt.Sprintf("bench-u%d", k+1), *password); err != nil {
			log.Fatal(err)
		}
	}
	codes, err := c.setUp(admin, users, fmt.Sprint(time.Now().Unix()))
	if err != nil {
		log.Fatal(err)
	}

	before, err := c.approved(admin)
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	from, until := start.Add(*warm), start.Add(*warm+*dur)
	var (
		total   atomic.Int64
		mu      sync.Mutex
		inside  []time.Duration // latencies of the instances completed inside the window
		failure error
		wg      sync.WaitGroup
	)
	for k := range *conc {
		wg.Go(func() {
			for time.Now().Before(until) {
				t0 := time.Now()
				if err := c.instance(applicant, users[k], codes[k]); err != nil {
					mu.Lock()
					failure = errors.Join(failure, err)
					mu.Unlock()
					return
				}
				total.Add(1)
				if t1 := time.Now(); !t1.Before(from) && t1.Before(until) {
					mu.Lock()
					inside = append(inside, t1.Sub(t0))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if failure != nil {
		log.Fatalf("run failed: %v", failure)
	}

	// Every completed instance is approved, and no task is left pending.
	after, err := c.approved(admin)
	if err != nil {
		log.Fatal(err)
	}
	if int64(after-before) != total.Load() {
		log.Fatalf("%d instances completed, the admin list counts %d more approved", total.Load(), after-before)
	}
	for k := range users {
		var p pending
		if err := c.call(users[k].token, "approval/my", "find_pending_tasks", map[string]any{"page": 1, "pageSize": 10}, &p); err != nil {
			log.Fatal(err)
		}
		if p.Total != 0 {
			log.Fatalf("bench-u%d has %d pending tasks after the run", k+1, p.Total)
		}
	}
	fmt.Printf("RESULT instances_per_s=%.1f p50_ms=%.2f p99_ms=%.2f window_s=%.0f workers=%d instances=%d approved=%d\n",
		float64(len(inside))/dur.Seconds(), latency.Millis(inside, 0.50), latency.Millis(inside, 0.99), dur.Seconds(), *conc, len(inside), after-before)
	if len(inside) == 0 {
		os.Exit(1)
	}
}

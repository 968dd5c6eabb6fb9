// Package cron is the durable cron store of svc (spec §4.1, §7, §8.3 `svc.cron.store`;
// wire facts in spec/wire-runtime.md §1): schedules persisted in the database, claimed by any
// number of nodes through one claim transaction per batch, executed by host job handlers and
// journaled run by run.
//
// # Status
//
// Done: tables and migrations, triggers, the job registry, the built-in jobs, the engine (claim,
// misfire, overlap, timeout, panic, heartbeat, takeover, recovery, shutdown), the Go management
// API (Create, Update, Get, List, Pause, Resume, TriggerNow, Delete, Runs), the resources below
// and the operator CLI (cmd/svc: svc cron list | runs NAME | trigger NAME | pause NAME | resume
// NAME). The module is in the server's boot chain (boot.go, after monitor; host jobs through
// svc.WithCron, the service through Server.Cron). Acceptance: multinode_test.go (three
// PostgreSQL nodes, two MariaDB nodes, 200 one-second schedules over 30 s of a shared fake
// clock), crash_test.go (a node killed by SIGKILL mid-run, recovered by another);
// bench/cron measures throughput and fire lag.
//
// # Resources (spec §4.1, wire-runtime §1.4)
//
// sys/cron/schedule: find_page (search name contains, jobName, kind, isEnabled; meta {page,
// size}, size default 15, max 1000; ordered by name), get ({name} → {schedule, nextFires,
// nextFiresUnixMs}, ≤ 5, empty while paused or spent), list_jobs (this node's job names,
// sorted), describe_jobs (svc's addition: the same jobs as [{name, paramsRequired,
// paramsSchema?, paramsExample?}] from each handler's ParamsDescriber — the built-ins describe
// theirs; the console's schedule form shows them), preview_fires (validates like a save) —
// permission cron.schedule.query; create, update,
// delete, pause, resume, trigger_now — permission cron.schedule.manage, audited; delete, pause,
// resume and trigger_now answer no data. sys/cron/run: find_page (id, scheduleName, jobName,
// status, nodeId equal, scheduledAtFrom/To inclusive; newest claim first) and find_one (not
// found: 2001) — permission cron.run.query. With the store disabled both resources exist
// without operations. Both find_page read meta.sort ([{column, direction, nullsOrder}],
// wire-core §9) over an allow-list of columns by JSON name (either wire shape); unknown
// columns are ignored and the default order breaks ties.
//
// # Built-in jobs
//
// With Options.Builtins (set by the ready binary cmd/svc, so `svc serve` has them; library
// hosts opt in) the registry also holds http.request (HTTPRequestJob: method, url, headers,
// body, timeout; 2xx succeeds, otherwise the status and a 512-byte body excerpt are the run's
// error) and event.publish (EventPublishJob: {type, payload} on the server's bus; types with
// the framework's prefix refused in any letter case, event.Reserved). http.request obeys
// svc.cron.store.http_allowed_hosts (ours, HostPolicy): host names, "*.domain", IPs, CIDRs;
// empty allows public addresses only; loopback, private, link-local, CGNAT, reserved and
// metadata addresses, and IPv6 forms embedding an IPv4 address (mapped, IPv4-compatible ::/96,
// NAT64), need an IP/CIDR entry. The check runs on the URL, on each redirect and, through the
// dialer's Control hook, on the resolved address of every connection, so DNS rebinding cannot
// bypass it; proxies from the environment are not used. Both built-ins also check their params
// when a schedule is saved (ParamsChecker: create, update, preview, default schedules): the
// same URL check (scheme, host, an IP literal's range, the allow-list) and the same event-type
// check, refused with 2706, so a schedule that could only fail is not stored. A host name's
// resolved address is judged at run time only (DNS may change). Risk: whoever holds
// cron.schedule.manage picks the URLs the server calls (docs/cron.md).
//
// # Wiring
//
// The server builds the module after monitor with the host's options:
//
//	srv, err := svc.New(cfg, svc.WithCron(cron.Options{Jobs: []cron.JobHandler{cron.Job("report", fn)}}))
//
// and running.Cron() (running, err := srv.Start(ctx)) is the Go management API. Outside the server:
//
//	store, err := cron.New(deps, cron.Options{Jobs: []cron.JobHandler{cron.Job("report", fn)}})
//	mods = append(mods, store.Module())
//
// WithDefaultSchedule(handler, spec) ships a default schedule: Start creates it unless a schedule
// of its name exists (name and job name default to the job's name; an invalid spec fails
// startup), before the workers start.
//
// With svc.cron.store.enabled = false Module has no workers and no operations and logs a
// warning when handlers are registered; with auto_migrate its migrations run at startup.
//
// # Tables (wire-runtime §1.2, the newest design)
//
// crn_schedule (one row per schedule, unique name, cursor next_fire_at_unix_ms),
// crn_fire_request (manual and recovery fires waiting for a claim; source_run_id unique, so a
// run is recovered once) and crn_run (the journal; rows survive the schedule's deletion). Every
// instant is epoch milliseconds (BIGINT *_unix_ms); audit columns are UTC timestamps. IDs are
// UUIDv7.
//
// # Triggers (wire-runtime §1.5)
//
//   - cron: 5- or 6-field expressions (the optional first field is seconds) and @ descriptors
//     (@daily, @every 90m), parsed by github.com/netresearch/go-cron, evaluated in the IANA zone
//     timezone (empty → UTC, stored as "UTC"; "Local" and TZ=/CRON_TZ= prefixes refused; tzdata
//     embedded). Daylight saving: a wall time a spring-forward change skips fires at the same
//     minute of the next hour (02:30 → 03:30); in the hour a fall-back change repeats, an
//     expression pinned to certain hours fires once (the first pass), one that fires every hour
//     keeps firing by elapsed time. This is our choice where the original's robfig parser fired
//     fixed times twice.
//   - interval: fixed rate every ≥ 1 s, a whole number of ms, phase anchored at startsAt or the
//     creation time (anchor_at_unix_ms); next = the anchor while before it, else the first
//     anchor + k·every strictly after.
//   - once: a single fire at its time.
//
// Windows: startsAt is itself a valid fire time, occurrences after endsAt are dropped, endsAt
// must be after startsAt. All arithmetic is in Timing (Compile, Next, NextN) and Decide: pure
// functions.
//
// # Engine (wire-runtime §1.6–§1.9)
//
// Workers: cron-claim (a loop: it sleeps until the nearest cursor of a local-job schedule, within
// [50 ms, poll_interval], and local create, update, resume, trigger_now and finished runs wake
// it, so poll_interval bounds how late other nodes' changes are seen, not fire precision),
// cron-heartbeat (heartbeat_interval), cron-recovery (min(abandoned_after/2, poll_interval)) and,
// when run_retention > 0, cron-prune (hourly: terminal runs finished more than run_retention ago
// are deleted). Claim runs up to 32 transactions while they make progress, each over at most
// min(batch_size, free slots of max_concurrent) schedules. One transaction locks, in this order,
// schedules of local jobs with waiting requests (oldest first) and due schedules (earliest cursor
// first) with FOR UPDATE SKIP LOCKED on PostgreSQL and MySQL/MariaDB (READ COMMITTED), then reads
// their running rows (stale ones — no heartbeat for abandoned_after — become abandoned through
// an UPDATE guarded by status and heartbeat, with a recovery request when the schedule
// recovers), then locks their requests; it merges the regular occurrence with
// the requests in logical order (the regular occurrence first on a tie, then requests by id),
// decides, journals (the batch's new crn_run rows in one INSERT), consumes requests and moves
// cursors. A run's outcome is one guarded UPDATE (a transaction only when a canceled run queues
// its recovery), retried up to 5 times on deadlocks or busy errors. SQLite has no row locks: the
// transaction starts with BEGIN IMMEDIATE and a busy database rolls the batch back to be retried
// at the next tick. A node claims only schedules whose job it has registered.
//
// Deviation from wire-runtime §1.6 step 3, for throughput: running rows are read, not locked
// (FOR UPDATE on them made claims and the outcome writes and heartbeats of other nodes wait
// for each other, and under load the cluster collapsed into backlog); the guarded UPDATEs keep
// takeover and completion exclusive. Each node writes at most 8 outcomes at once, below the
// pool's idle connections.
//
// Misfire (Decide): within misfire_threshold the occurrence fires on time; later, fire_now runs
// one catch-up at the original due time and journals the rest of the gap (capped at 10 000) as
// one missed row whose scheduledAt is the first missed occurrence, skip runs nothing and
// journals one missed row at due with missedCount = 1 + the rest; the cursor jumps to the first
// occurrence after now. Pause keeps the cursor, so resume hands the paused gap to this rule.
//
// Concurrency: under forbid, a regular or manual fire overlapping a live run is journaled
// skipped; a recovery request waits until the live run ends. Statuses: running, succeeded,
// failed (handler error, panic "cron store: job panicked: job "<name>": <value>", params that
// a TypedJob cannot decode — the handler is not called —, or "cron store: run timed out after
// <timeout>", which outranks a nil result), missed, skipped, abandoned, canceled ("canceled by
// shutdown", with a recovery request when the schedule recovers). The timeout of a run is the
// schedule's timeoutMs, else run_timeout (0 = none). Completion is guarded by status = running:
// a late outcome after a takeover is discarded. Errors are clipped to 2000 bytes of valid
// UTF-8. Stop stops claiming, gives running handlers 30 s (or until its ctx ends), then cancels
// them.
//
// # Events (wire-runtime §1.11)
//
// With Options.Events set, or else on the server's bus (app.Platform.Events through BusPublisher,
// without a transaction), svc.cron.run.failed {runId, scheduleName, jobName, scheduledAt,
// scheduledAtUnixMs, nodeId, error} follows every failed run (error, panic, decode failure,
// timeout) and svc.cron.run.abandoned (the same without error) every takeover. They are best
// effort, as in the original: published after the commit; a publish failure is logged. The
// original's "vef." prefix is neutralized to the spec's "svc.".
//
// # Errors
//
// 2700 ErrScheduleNotFound, 2701 ErrScheduleExists, 2702 ErrScheduleDisabled, 2703
// ErrTriggerInvalid (reason), 2704 ErrJobNotRegistered, 2705 ErrStoreDisabled, 2706
// ErrScheduleInvalid (reason), all on HTTP 200; messages in messages/{en,zh-CN}/cron.json.
//
// # Metrics
//
// Registered on app.Platform.Metrics (served with svc.metrics.enabled, docs/operations.md):
// svc_cron_runs_total{job,status} counts the runs this node journaled succeeded, failed or
// canceled and the takeovers it made (abandoned); missed and skipped fires are journaled but not
// counted (they are written inside the claim transaction, which may roll back).
// svc_cron_fire_lag_seconds is the claim delay after the logical fire time of each run started.
//
// # Wire shapes
//
// The real client speaks the older shape (date-time strings "YYYY-MM-DD HH:mm:ss" in the
// server's zone: fireAt, startsAt, endsAt, nextFireAt, lastFireAt, scheduledAt, startedAt,
// finishedAt, heartbeatAt, trigger.at, nextFires, scheduledAtFrom/To); the newest server the
// *UnixMs integers (plus anchorAtUnixMs and claimedAtUnixMs). Responses carry both; params
// accept either, the *UnixMs form winning when both are sent (spec/README.md "Decisions that
// differ from the original"). A malformed date-time string is 2703 in a trigger, 2706 in a
// window and 400/1400 in a run search. Trigger fields of another kind are judged by non-zero
// value (2703), the older server's rule, since the real client sends only its kind's fields.
package cron

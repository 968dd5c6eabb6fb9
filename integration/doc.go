// Package integration is the integration module (issues #20, #21): the definitions an
// integration runs on — contracts, external systems, adapters, routes and code maps — managed
// through /api by the original's client, the secrets of systems sealed at rest, the invocation
// log recorder and the per-node statistics (part 1); the JavaScript adapter runtime, outbound
// invocations (Invoker), the inbound gateway and integration/ops (part 2).
//
// # Inclusion
//
// The module is included by the host with svc.WithIntegration (the ready binary includes it);
// without it no integration resource is registered (spec §1, §2.2) and
// sys/monitor.get_integration_stats answers {enabled:false, stats:[]}.
//
// # Resources (spec §2.2, wire-integration §5), all Bearer
//
//   - integration/contract, integration/system, integration/adapter, integration/route,
//     integration/code_map: find_page, find_all, create (→ {id}), update, delete, delete_many
//     ({pks}, the client's bulk delete) on the shared crud helper; permissions
//     integration.<resource>.query|create|update|delete (delete_many: delete). Filters come
//     from params, each falling back to meta; paging and sort from meta.
//   - integration/code_set: list_code_sets, list_codes under integration.code_map.query;
//     {supported:false} unless the host passes Options.CodeSets.
//   - integration/log: find_page, find_one under integration.log.query, newest first.
//   - integration/ops (§5.8): dry_run, dry_run_inbound, test_connection, diagnose_routes, and
//     key_status (beyond the original, keystatus.go: per system with secrets how many are
//     sealed with the configured key, plaintext or undecryptable, and whether a rotation is
//     needed; values never leave the server), each under integration.ops.<action>. Dry runs allow disabled definitions, run the given
//     script or the saved adapter with real wire calls and run_timeout, answer the trace masked
//     as the log stores it, and record nothing (no statistics, log or cache). dry_run_inbound
//     skips verification and answers handlerOutput from a stub instead of the business handler.
//     test_connection probes HTTP (method, path on the base URL, with the outbound auth) and
//     the data source (a throwaway connection); unreachable is data, config faults are errors.
//
// # Route (spec §4.2, wire-integration §6), outside /api
//
// POST /integration/inbound/{systemCode}/{contractCode}, no Bearer: the system's own
// inboundAuth. Pipeline: system resolved → rate limit per (system, client IP), every unknown
// code sharing one bucket per client IP (svc.integration.inbound.rate_limit, sliding window per
// node; 429/1401 with Retry-After) → system (unknown or disabled) and verification: every
// failure the same 401/2622, reason logged server-side, counted in
// statistics under (system, "", inbound) as auth or config (missing/undecryptable params,
// unknown scheme, no inboundAuth, a failing auth script), never written to the log; unknown
// system codes are not counted (a counter per guessed code would grow without bound) →
// contract and inbound adapter (missing/disabled: 404, counted as config) → registered
// handler (none: 501/2623, kind config) → the body → the script with timeout = adapter timeoutMs or run_timeout → statistics and
// log → the reply. Schemes: none; ip (whitelist of IPs/CIDRs; empty is a config fault, an
// unparsable entry denies everyone); http_basic and bearer (scheme word case-insensitive,
// constant-time); header and query (every configured pair must match, a blank value never
// does); signature (HMAC-SHA256 of app_id=<system code>&method&nonce&path&timestamp, hex
// secret, headers x-timestamp/x-nonce/x-signature, ±5 minutes, the nonce spent after the
// signature checks in kv.NonceStore — Redis under svc:integration:<app>:nonce: when
// svc.kvstore is enabled, so a replay is refused on every node; in memory otherwise); script
// (zero-IO runtime with request and params, truthy grants). Replies: null → 200 empty; an
// object with $response {status, headers, body} (status outside 100..599 → 200; a string body
// is text/plain unless the script set a content type; $response not an object → 500/2613);
// anything else → 200 JSON. Pipeline errors are the {code, message, data} envelope with the
// status remapped for external callers: non-200 statuses kept (401, 429, 501), contract/adapter
// missing or disabled 404, 2608 → 400, every other business error 500.
//
// The body is read only when the pipeline needs it (issue #31 item 6): the built-in schemes but
// script look at headers, query and client address only (signature signs method, path, nonce
// and timestamp), so they verify before it, and every refusal up to the missing handler
// answers without reading it; the script scheme and host schemes (InboundScheme.Verify gets
// the whole request) read it before verification. It is read through app.Deps.Bodies (the
// /api engine's rpc.Engine.ReadBody) under the process's one body memory budget
// (svc.app.body_memory_budget), at most 16 MiB and svc.app.body_limit, with twice its size
// reserved besides for the script's string of it (bindRequest: a Go string, goja's UTF-16 form
// for non-ASCII text; the body no longer goes through JSON, which multiplied it); over the
// limit 413, no room within svc.app.body_read_idle_timeout 503 with Retry-After: 1, a failed
// read 400. A refusal before the body is logged (config kinds) without it.
//
// # Runtime (wire-integration §8, §14)
//
// goja, in worker processes (worker.go, pool.go, wire.go, hostrun.go; issue #42 items 4, 5).
// Every run executes in a worker: this binary started again by itself (os.Executable, argument
// svc-integration-script-worker and SVC_INTEGRATION_WORKER=1, recognised by this package's init
// before main, so library hosts and test binaries need nothing; Limits.Worker names another
// executable importing this package, as the package's tests do with a plain build of
// testdata/worker so that no race-instrumented worker is measured), with an empty environment but
// its limits, which sets its own RLIMIT_DATA to svc.integration.script.memory_limit (512 MiB;
// GOMEMLIMIT at three quarters) before it reads anything. A run needing more kills the worker
// (Go's fatal out of memory): kind script, "memory limit exceeded", whatever construct allocated
// (string +, +=, templates, builtins). At the run's deadline the worker is killed (SIGKILL) and
// reaped before the answer goes out, whatever it is doing (a backtracking regular expression, a
// sparse-array scan); a host call that ignores its context is answered without abandonGrace
// (50 ms) after. At most svc.integration.script.concurrency runs at once (the number of CPUs);
// a run first reserves a slot and a started worker (Engine.reserve), waiting at most
// svc.integration.script.queue_wait (5 s), else 2630 (kind timeout), and only then starts its
// deadline, so a process start never eats a run's timeout. The pool is sized by demand: no
// worker before the first run, then one started spare beyond the busy ones and one per waiting
// run, at most concurrency+1 (replaced in the background); it reuses a worker after a normal
// run (a fresh goja runtime per run is the isolation) and never after a kill or a crash. The worker compiles and runs the script, the envelopes and
// the pure libraries (crypto, URL, the bundle); the host bindings (http.send, sql, cache, codes,
// dispatch, console, errors) stay in the server, which keeps a runtime per run where the
// surfaces' setup defines them (run.set) and the data globals: a worker's call arrives as a
// length-prefixed JSON frame (an inbound body crosses as a raw frame after its message), is converted into that runtime (no script code ever runs in the
// server), served and answered; a host call's Go error is kept by reference so the run's
// failure is classified by its real type. A worker's message (a result, a call's arguments) is
// at most 32 MiB. Scripts compile once per content (cache of 1024 programs, in the server for
// syntax errors and in each worker) in strict mode, wrapped as a function whose top-level
// return is the result; a trailing expression statement is returned too. Go values map to JSON
// tag names. Call depth 1000 frames (Options.ScriptLimits.MaxCallDepth; "maximum call depth
// exceeded", kind script); a loop is stopped at the deadline (timeout, 2612); a returned
// promise that is still pending once every job ran can never settle (host calls are
// synchronous, there are no timers) and is reported as a timeout at once. Baseline bindings:
// console (log/info/warn/error to the server log, masked with the invocation log's masker: the
// system's secrets, credential fields and log.mask_fields; then a whole line is masked when its
// letters and digits contain a secret's, so pieces of a secret are masked too — masker.line;
// not a barrier against an author who transforms a secret a script holds), crypto (md5, sha1, sha256, sha512,
// sm3, hmac, base64Encode/Decode, hexEncode/Decode, uuid), cache (in-process, JSON values of at
// most 1 MiB; every entry expires after svc.integration.script_cache.ttl, 1h, or its shorter
// ttl in ms, by the injected clock; all entries hold at most script_cache.max_bytes, 32 MiB,
// least recently used evicted; held in the server), URL and URLSearchParams, and
// the standard bundle dayjs, BigNumber, fxp, radashi and z (generated by jsbundle/gen.sh from
// pinned npm packages, embedded, each evaluated only on a script's first use of its global).
// Outbound surface: input, system {code, name, params}, errors.upstream, codes, http (with a
// base URL), sql (with a data source). Inbound: request — without the credentials the gateway
// verified (withoutCredentials: Authorization under http_basic and bearer, every header and query
// param holding a sensitive inbound param's value; the dry run withholds the same) — system,
// dispatch, codes (no http, sql or errors). Auth scripts: request, params. Envelope scripts are functions of request /
// response run inside the adapter's runtime, synchronous (a request envelope must return an
// object).
//
// # Outbound (wire-integration §7)
//
// Invoker.Invoke(ctx, contract, input, WithSystem | WithRoute, WithTimeout, WithCache) and
// Call[T]; the host reaches it as svc.Running.Integration(). Order: both targets 2607; contract
// 2600/2601; route (Options.Routes or itg_route: enabled rows of the key with the contract or the
// wildcard, exact first; 2606) or the given system; system 2602/2603; outbound adapter
// 2604/2605 (these are returned as they are and not counted); input canonicalized; cache hit
// (uncounted, unlogged); input schema (input_invalid 2608); run (timeout = option, adapter
// timeoutMs, run_timeout); output serialization and schema (output_invalid 2609); statistics
// and log. Run failures are *InvocationError{Kind, Err} classified in §7's order: canceled
// 2624, timeout 2612 (the run's deadline only), upstream 2610, outbound auth hook → config
// 2617, transport 2611 (a call that failed or outlived its own timeout, a body over
// max_response_body, an undialable data source), codes' missing map → config 2627, else
// script 2613. http: relative paths only on baseUrl; method default GET; string/bytes bodies
// verbatim, others JSON; per-call timeout = system timeoutMs (default 30 s), shortened by the
// call's timeout option; retries when retry.maxAttempts > 1 on GET/HEAD/OPTIONS/PUT/DELETE/TRACE
// only, after transport errors and 429/502/503/504, backoff initialBackoffMs (200 ms) doubling
// to maxBackoffMs (2 s); redirects followed (only "follow" accepted); envelope: false skips the
// envelope; non-2xx is not an exception; every attempt is in the trace. Outbound auth: none,
// http_basic, bearer, header, query, signature (appId, hex secret: x-timestamp, x-nonce,
// x-signature over the URL path — verified by another svc's inbound signature scheme), script
// (zero-IO runtime per request; returned object = headers). sql: queryList/queryOne on a
// read_only data source through db.ReadOnly, the runner MCP's database_query uses (one
// statement decided by the engine, the engine refusing anything but a read, a superuser or
// file-privileged login refused, statement timeout svc.integration.run_timeout); on a
// read_write one in a read-only transaction of the system's pool (PRAGMA query_only on
// SQLite); execute → {rowsAffected} in read_write mode only, "?" placeholders, 1000 rows and
// 4 MiB of values at most, counted while reading (more is an error). One runner or pool per
// system, reopened when its data source changes, closed at shutdown. codes: toExternal/toCanonical(codeSet, value, {fallback}|{passthrough:true}|
// {reject:true}) and entries(codeSet), one snapshot per run; unmapped under reject is 2628
// (kind script), a missing or disabled map 2627 (kind config).
//
// # Host schemes (wire-integration §13)
//
// Options.OutboundSchemes (Name, SensitiveParams, Apply(params) → per-request func) and
// Options.InboundSchemes (Name, SensitiveParams, Verify(ctx, request, params)) add or replace
// authentication schemes; their sensitive params are sealed and masked like the built-ins'
// (the shape of their params is theirs to check when applied: an Apply error is 2617, kind
// config; a Verify error refuses the delivery as auth). svc integration rotate-key, which runs
// without the host's options, re-seals every param of a scheme it does not know.
//
// # Inbound handlers
//
// Options.InboundHandlers (NewInboundHandler[I, O](contract, fn), typed through a JSON round
// trip); a blank or duplicate contract code fails the build (ErrBlankHandlerContract,
// ErrDuplicateHandlerContract). dispatch(input): canonicalize, input schema (input_invalid),
// handler (its error: kind handler), output canonicalized and checked (output_invalid); a
// failure throws a catchable error and the last one sticks to the delivery (a script that
// catches it and replies still counts and logs as failed). A thrown dispatch error keeps its
// kind; other throws are classified as outbound. The log row of an accepted delivery holds the
// dispatched input(s) and output(s) (one value, an array for several) and one pseudo-exchange
// of the caller's request with the reply; the system's secrets and the credential headers are
// masked. The ready binary registers svc.echo, a handler answering its input (docs/integration.md).
//
// Validation and codes in the original's order: contract schemas compile as JSON Schema
// draft 2020-12 (santhosh-tekuri/jsonschema/v6; 2615) with a closed loader (jsonschema.go:
// only the schema itself and the drafts' embedded metaschemas resolve; a file:, http(s):,
// urn: or relative $ref or $schema is refused unread, the same answer for a target that
// exists and one that does not, so a schema is no oracle for the server's files; the same
// compiler checks stored schemas at run time), labels (2626); system outbound scheme
// known (2614), auth shapes (2617), "******" keeps the stored secret (none stored: 2617, or
// 2620 for the data-source password), absolute baseUrl (2619), data source kind/mode (2620),
// envelope needs baseUrl and a script (2625), kept secrets must open with the configured key
// (2617); adapter direction (2621) and a script that compiles (2616); route references (2618); code-map policy and index — a value
// listed twice on one side, primaries and aliases compared by normalized string form, so 1 and
// "1" collide (2629), and the host catalog's code sets when it can list them. Duplicate unique
// keys are 2002; deleting a referenced contract or system is 2003 (foreign keys, and for
// routes, which have no foreign key to contracts, a check).
//
// # Tables (wire-integration §3), migrations/{postgres,mysql,sqlite}/001_init.sql
//
// itg_contract, itg_system, itg_adapter (unique system+contract+direction), itg_route (unique
// route_key+contract_id; an empty contract_id is the wildcard), itg_code_map (unique system+code_set),
// itg_invocation_log. Run by svc.integration.auto_migrate or `svc migrate`.
//
// # Secrets at rest (wire-integration §9)
//
// Sensitive params of each scheme (http_basic password, bearer token, signature secret, every
// param of header/query/script, every param of an unknown scheme) and dataSource.password are
// stored as "enc:" + base64(nonce ‖ ciphertext ‖ tag) with AES-GCM or SM4-GCM from
// svc.integration.secret_key / secret_algorithm; responses show "******". Without a key values
// are stored in plaintext and Start logs one warning. A malformed key or an unknown algorithm
// fails the start (config: ErrInvalidIntegrationSecretKey, ErrInvalidIntegrationSecretAlgorithm;
// ErrInvalidIntegrationLogMode and ErrInvalidIntegrationLogRetention are checked with the
// configuration). Beyond the original: `svc integration rotate-key --from OLD --to NEW`
// (RotateKey) re-encrypts every stored secret in one transaction, all rows or none.
//
// # Invocation log and statistics (wire-integration §10, §11)
//
// Recorder.Record writes per svc.integration.log.mode (off, errors, all): captures masked by
// field name (password, token, secret and log.mask_fields, case-insensitively, at any depth),
// credential headers (authorization, proxy-authorization, cookie, set-cookie) and masked query
// params, then every literal secret value of the system and every credential header value
// scrubbed everywhere, then cut at log.capture_limit bytes with "…(truncated)" (a capture over
// the limit is stored as a JSON string). request_id is the /api request's id. The insert does
// not inherit the caller's cancellation. Worker integration-log-prune (hourly, when
// log.retention > 0) deletes older rows. Stats counts per node per (system, contract,
// direction); the composition root hands it to sys/monitor (spec §2.5), and metrics.go reports
// it on app.Deps.Metrics as svc_integration_invocations_total and
// svc_integration_invocation_seconds_total at scrape time (docs/operations.md; nothing is
// registered with Deps.Metrics nil). Options.WrapTransport wraps the outbound HTTP transport; the composition
// root passes ops.Transport, so a call made inside a traced request is a client span.
//
// # Config keys (spec §8.3)
//
// svc.integration.auto_migrate, secret_key, secret_algorithm, run_timeout, max_response_body,
// log.mode, log.capture_limit, log.mask_fields, log.retention, inbound.rate_limit.max,
// inbound.rate_limit.period, script_cache.max_bytes, script_cache.ttl, script.memory_limit,
// script.concurrency, script.queue_wait. Workers: integration-log-prune. Processes: the script
// workers (above).
//
// # Compatibility choices
//
//   - Ids are UUIDv7 strings (VARCHAR(64)) where the original used 20-character XIDs; clients
//     treat ids as opaque.
//   - delete_many is served (the original's client sends it; the original has no handler).
//   - A failed secret check on update of an inbound scheme that is unknown answers 2617 (the
//     original checks only outbound schemes against the registry, 2614).
//   - Labels filters use each dialect's JSON functions; a key outside the labels rule matches
//     nothing.
//   - Success messages are the engine's "ok", not crud_created/updated/deleted.
//   - Part 2 beyond or beside the original: the sql library's read-only guard is the database's
//     read-only transaction, not an SQL parser; the per-system clients (LRU of 64, keyed by
//     the stored baseUrl, timeoutMs, retry and outboundAuth) share one HTTP transport, with
//     per-call timeouts through contexts; inbound scripts have no errors library (as the
//     original); a pending promise is a timeout at once; inbound rejections of unknown system
//     codes are logged, not counted.
package integration

// Package rpc is the /api engine of svc: the request envelope, resources and typed operations,
// the authentication strategy registry, the permission check, the rate limiter, the body
// encodings, and the one renderer of the {code, message, data} envelope. It speaks the wire
// protocol of the original framework (spec/wire-core.md §1–§4, §6) so its clients work
// unmodified.
//
// # Wiring
//
//	e, err := rpc.NewEngine(rpc.EngineConfig{BodyLimit: …, Logger: …, Permissions: checker, …})
//	e.RegisterStrategy(bearer)             // security registers bearer, api_key, http_basic, ip
//	e.Register(module.Resources...)        // fails fast on any bad declaration
//	if err := e.Validate(); err != nil {…} // every strategy named by an op exists; freezes
//	mux.Handle("/api", e)                  // every method: others get the 405 envelope
//
// Operations are declared in tables with Handle (see operation.go); nothing is found by
// reflection per request. Registration checks: resource names are lowercase snake segments
// joined by "/", actions snake_case, versions v1, v2, …, permission tokens dot-separated words
// ([A-Za-z0-9_]+ per segment), no permission on a public operation, no duplicate
// (resource, action, version), Invoke set, no negative timeout. All problems of one Register call
// are reported together and nothing of that call is registered. After Validate (or the first
// request) the registry is read-only and read without locks.
//
// # The request path
//
// ServeHTTP is one straight-line function, one step per file, in the order of ARCHITECTURE.md:
//
//  1. body.go — body encodings. A declared Content-Length over BodyLimit answers 413 at once.
//     JSON bodies are read whole within the body memory budget (charged as the data arrives,
//     in chunks joined at the end; see "Body memory") and X-Body-Encoding is undone while they
//     stream in; multipart bodies are
//     only wrapped in the limit, to be streamed.
//  2. envelope.go, multipart.go — the envelope (below).
//  3. lookup.go — one map hit on (resource, action, version), key built in a stack buffer.
//     Unknown → 404/1200, before any authentication.
//  4. authenticate.go — the operation's strategy: bearer unless declared (EngineConfig.
//     DefaultStrategy), "none" (built in, the anonymous principal) for public operations.
//  5. permission.go — RequiredPermission through the PermissionChecker; system principals
//     bypass; a denial, a missing checker or a checker error answer 403/1100 (the error is
//     logged).
//  6. ratelimit.go — the rate limiter (below).
//  7. and 8. invoke.go — Op.Invoke decodes and validates the params (raw JSON, so numbers keep
//     their digits) and runs the handler under the operation's timeout (DefaultTimeout, 30s).
//  9. render.go — the envelope; every error, from any step, goes through the one renderer.
//
// The handler receives a Call: resource, action, version, the principal (never nil), client IP
// and request id (from RequestInfo set by the outer middleware; without it the engine uses the
// peer address and a fresh UUIDv7 echoed as X-Request-ID), meta ({} when absent, shared: do not
// modify), the request, the response header, a logger carrying request_id, resource, action and
// version, and Files for multipart requests (nil for JSON).
//
// # Observing calls
//
// EngineConfig.Observer (an Observer; the ops package implements it) watches the calls served
// over HTTP for metrics and traces: Begin when a call arrives (it may replace the context with
// one carrying a span), the route's OperationObserver once the operation is known and when the
// answer is written. Per-operation observers are created once when the engine freezes, so a
// call costs the observer's atomic updates and nothing else; with no Observer the request path
// only checks a nil field. In-process calls are not observed.
//
// # In-process calls
//
// Engine.CallAs and Engine.Call (inprocess.go) run steps 3 and 5 to 8 for a caller that has
// already authenticated its principal (MCP tools, cron jobs, approval hooks): the same lookup,
// permission check, rate-limit window, params decoding and validation, handler timeout, panic
// recovery and audit record as /api, and the *Error /api would render, returned instead of
// written. No strategy runs, but the operation's access rule is /api's (issue #31): a public
// operation runs as the given principal (anonymous when nil); any other answers 401/1000 when
// the principal is nil or the anonymous user, as /api answers a request without a credential —
// an MCP caller without a token under svc.mcp.require_auth = false runs no bearer operation.
//
// The handler's Request is a bodiless POST /api whose only header is the caller's credential:
// Caller.Authorization, the "Bearer <token>" the principal was verified from (Call passes none,
// for cron jobs and hooks). An operation that reads the request's credential therefore sees
// what it would see on /api: security/auth logout called as an MCP tool revokes the token the
// MCP caller presented. Operations that need more of the HTTP request — multipart file parts,
// cookies — are declared with the HTTPOnly option: in process they answer 404/1200 as if absent,
// and OperationInfo.HTTPOnly tells the MCP endpoint not to offer them as tools.
//
// # The envelope
//
// Requests: POST /api with Content-Type application/json (any parameters, type compared
// case-insensitively) carrying {resource, action, version, params, meta}, or multipart/form-data
// with plain fields resource, action, version and params/meta as JSON strings. Anything else —
// application/x-www-form-urlencoded, text/plain, application/*+json, no Content-Type — answers
// 415/1300. resource, action and version are required (400/1400 "<field> is required") and
// limited to the original's validator sets: resource [A-Za-z0-9_/], action [A-Za-z0-9_], version
// [A-Za-z0-9] (else 400/1400 "<field> is invalid"); a well-formed but unknown triple is 404.
// params and meta are objects; absent or null means {}. Unknown top-level keys are ignored.
//
// The JSON body is decoded by encoding/json into a map of raw values: keys match exactly (the
// original's struct decoding also folded case; no client relies on it), the last duplicate wins,
// params and meta stay raw and keep every digit of their numbers.
//
// Params are decoded with encoding/json's semantics (json.Unmarshal's result, UseNumber where a
// number can reach an interface), through pooled decoders; results are encoded by encoding/json
// (a hand-written codec for flat structs and a lazily armed deadline context stood here; issue
// #32 measured them at about 4 % of a call's end-to-end CPU each and removed them; issue #43
// removed a hand scanner of the envelope's top-level keys the same way: on get_user_info with a
// used token the plain path's CPU per request read 0.96× the scanner's, bench/bypass/run.sh).
//
// Before decoding, params that are not valid UTF-8 or contain a NUL character (\u0000) in any
// string are refused with 400/1400 "params is invalid" (checkParamText, issue #11): PostgreSQL
// cannot store either in text or jsonb, and they used to answer 500/1900. Params naming
// something (principals, ids, keys) are further checked by Check.Identifier in their Validate:
// no control character, bounded length.
//
// Log lines never carry more than MaxLoggedBytes (256) bytes of one identifier or piece of
// client input: LogText cuts longer values at a character boundary and appends
// TruncatedSuffix ("…(truncated)"). The access log (method, path), the audit record
// (principal id and name) and the security events (principal, identifier, app, session, client
// IP) use it; request ids are accepted only up to 128 characters.
//
// Responses: {"code","message","data"}, all three keys always present, data null when empty,
// Content-Type application/json; charset=utf-8. Success is code 0 with the message of key "ok".
// The envelope is written from pooled buffers in one Write.
//
// # Error rendering
//
// An *Error anywhere in the chain renders its own HTTP status, code, message (the literal
// Message, else Key and Args in the process-wide language) and Data. Anything else answers
// 500/1900 "unknown_error"; its cause is logged with the request id and never sent. Before
// either, an error that is or wraps context.Canceled while the request's context is done is the
// client's departure: 499/1900, logged at debug level (ClientAborted). A handler
// panic answers 500/1900 and is logged with its stack (http.ErrAbortHandler is re-raised). Data
// that cannot be encoded answers 500/1900. WriteError and WriteData are the same renderer for
// the routes outside /api (download proxy, /ws, /mcp), which also share Authenticate and
// CheckPermission.
//
// # Timeouts
//
// The handler runs on the request goroutine, so it may stream the request body and set headers
// without races; the operation's timeout reaches it through ctx. When the deadline has passed
// by the time the handler returns, the answer is 408/1402 whatever it returned. A handler that
// ignores ctx therefore delays its 408 until it returns: handlers must honour ctx. The ctx is
// context.WithTimeout's.
//
// # Strategies
//
// A Strategy returns a principal or an *Error (401 codes of wire-core §2.3). An unknown strategy
// name and a nil principal answer 401/1000; a plain (non-*Error) error is a server fault,
// 500/1900. Validate reports operations naming unregistered strategies at startup.
//
// # Rate limiting
//
// Per node, in memory (RateLimiter). The key is resource:version:action:clientIP:principalID
// (public operations count under the anonymous principal, so per IP), hashed to 64 bits with a
// per-process random seed instead of being stored. The limit is the operation's Max and Period
// when positive, else the engine default (100 per 5m): a non-positive Max never disables
// limiting. The window is an approximate sliding window of two fixed buckets per key, starting
// at the key's first call: a call is admitted while previous×(1−elapsed/period) + current < max.
// Limiting runs after authentication, so failed logins of unknown callers do not consume it, and
// refused calls are not counted. Refused: 429/1401 with Retry-After, the exact seconds until the
// estimate falls below max (rounded up, at least 1). Admitted: X-RateLimit-Limit,
// X-RateLimit-Remaining and X-RateLimit-Reset (seconds until the current bucket ends) on the
// response, whatever the handler answers. Memory is bounded: 64 shards, each sweeping windows
// whose two buckets are over at most once a minute of the injected clock (amortised on calls;
// Sweep does all shards at once) and rebuilding a map that fell below a quarter of its peak.
//
// # Body encodings (wire-core §6)
//
// For JSON requests only (multipart and other bodies are never decoded). The X-Body-Encoding
// value is trimmed and matched exactly. With the protected transport off: none (plain),
// "base64" (standard padded; ASCII whitespace anywhere is ignored, where the original tolerated
// it around the text and as line breaks) and "gzip+base64"; any other value answers
// ErrUnsupportedBodyEncoding (400/1400), a bad base64 or gzip stream ErrBodyDecodeFailed
// (400/1400), a decoded body over BodyLimit ErrBodyTooLarge (413/1400). Both are decoded as the
// body streams in (base64 decoder, then gzip reader, straight from the connection): the encoded
// text is never held, and inflating stops with 413 the moment the decoded bytes cross
// BodyLimit, so a gzip bomb costs at most the limit, and only while the body memory budget has
// room for it. Responses are not encoded.
//
// With EngineConfig.BodyEncoding enabled, "aes-gcm+base64" (AES-128/192/256) or
// "sm4-gcm+base64" (SM4 through github.com/emmansun/gmsm): the wire text is the standard base64
// of nonce(12) ‖ ciphertext ‖ tag(16), a fresh nonce per body, no additional data (BodyCodec). A
// non-empty JSON request must carry exactly the configured value: missing →
// ErrBodyEncodingRequired, anything else (base64 included: no downgrade) →
// ErrUnsupportedBodyEncoding, a failed tag → ErrBodyDecodeFailed. Every response ServeHTTP
// writes — successes and every error, the 404s, 401s, 405s, 415s and the encoding rejections
// themselves — is encrypted, with X-Body-Encoding set and Content-Type left as JSON, including
// the JSON answers to multipart requests. WriteError and WriteData (other routes) never encrypt.
// The transport has no replay protection (no timestamp or nonce is checked: a captured request
// body is accepted again) and does not cover multipart requests, whose fields and file parts
// travel as sent (issue #11; documented in docs/api.md).
//
// # Multipart
//
// Parts are read in order. Plain fields fill the envelope (the first of duplicate fields wins;
// other names are discarded unread into memory). A file part that arrives once resource,
// action, version and params have been read is not read by the engine: it reaches the handler
// through Call.Files as a stream straight from the body (File.Size −1), and plain fields after it
// are ignored. A file part that arrives earlier — or one the handler skips by asking for a later
// field, or the unread rest of a stream when the handler moves on — is spooled: in memory while
// the request's 1 MiB spool budget lasts, then to a temporary file in EngineConfig.SpoolDir,
// removed when the handler returns. Memory per multipart request is therefore bounded
// independently of the file sizes: at most 1 MiB of plain fields (more answers 413), 1 MiB of
// spooled data (on disk instead once the body memory budget has no room), at most 1000 parts,
// plus a 256 KiB read buffer, all counted in the body memory budget. BodyLimit applies to the whole
// multipart body, also while the handler streams it: going past it answers 413 whatever the
// handler returns (raise BodyLimit for large parts). Files are valid only during the handler
// call and are not safe for concurrent use.
//
// # Body memory
//
// EngineConfig.BodyMemoryBudget (svc.app.body_memory_budget, default twice BodyLimit, at least
// 64 MiB) bounds the request-body bytes all /api requests hold in memory together: JSON bodies
// as read, decoded bodies, the decrypted text of the protected transport, multipart fields and
// memory spools, and each multipart request's read buffers (264 KiB). File parts streamed to a
// handler are not held and do not count. Each request returns its share when its answer is
// written. The engine is the budget's one owner: routes outside /api that hold a body in memory
// read it with Engine.ReadBody (app.API.Bodies; the integration gateway), paying from the same
// budget under the same rules, with any other forms of the body they keep (copies) reserved
// too.
//
// Admission is a rule, not first come first served (issue #42 item 2; budget.go):
//
//   - Charged as received: a body read into memory is read into chunks (4 KiB first, doubling
//     up to 64 KiB) each charged before it is read into, so a request holds at most one chunk
//     more than it has received, whatever its Content-Length declares; a body of several
//     chunks is joined into one buffer at its end and the chunks' excess given back (they are
//     garbage then, uncounted like that of finished requests). A gzip body's inflater (64 KiB)
//     is charged once its header arrived; a multipart request's read buffers (264 KiB) on
//     admission.
//   - A share for small requests: an eighth of the budget is kept for requests holding at most
//     32 KiB (a login is under 1 KiB); large requests together hold at most the rest.
//   - Fair share per client address: one address (the RequestInfo client IP, as app's
//     trusted proxies determine it; an IPv6 address by its /64) holds at most
//     EngineConfig.BodyMemoryPerClient (svc.app.body_memory_per_client, default BodyLimit) over
//     all its requests, and at most a sixteenth of the small share (at least 32 KiB) in small
//     ones. A request's declared length counts against its own address (not the budget) from
//     admission, so one address's concurrent bodies queue instead of failing midway.
//   - A total deadline in proportion to what a body holds: while the engine reads a body into
//     memory it tells the body (BodyHolder; package app's paced body implements it) what it
//     holds, and the body must have arrived whole by its start + svc.app.body_min_rate_grace +
//     held / svc.app.body_memory_rate, wall-clock time; behind it the read fails (400) and the
//     connection closes. Streamed multipart file parts are not held: only the pace applies.
//
// Only a request that holds nothing waits: for its first bytes, in line (first come, first
// served; a waiter held back by its own address's cap does not hold back the others; a small
// one passes large ones while room is free) up to EngineConfig.BodyMemoryWait
// (svc.app.body_read_idle_timeout) or until its context ends, and then answers ErrServiceBusy:
// HTTP 503, code 1900 (wire-core §2 has no "busy" code; 1900 is what the original gives every
// status it does not map), message key service_busy, with Retry-After: 1 and Connection: close.
// Growth that finds no room answers 503 at once, except for the oldest request holding memory,
// which may wait (a multipart spool goes to its temporary file instead): a waiter never waits
// for a younger one that waits for it, so requests cannot deadlock one another. One request is
// never charged more than it may hold (its address's cap, the large part): a protected body
// needs up to 1.75 times the limit and allocates the rest unreserved. The heap may hold up to
// about twice the budget before the collector runs.
//
// A client that goes away is not a server fault: an error that is or wraps context.Canceled
// while the request's context is done (ClientAborted) renders ErrClientClosedRequest, status
// 499, from /api and from WriteError alike, so the access log, svc_api_requests_total, the
// trace and the audit record see 499, never a 5xx (issue #42 item 8).
//
// # Compatibility choices (where the wire facts were open)
//
//   - Malformed or empty JSON: 400/1400 (api_request_body_invalid_json), not the original's
//     500/1900 (spec/README.md).
//   - Other methods on /api: HTTP 405 with code 1900 — the code the original's error handler
//     gives every HTTP status it does not map (wire-core §1.1, §1.5) — message key
//     method_not_allowed and an Allow: POST header.
//   - No room in the body memory budget, or the client address at its share: 503 with code 1900
//     (service_busy) and Retry-After: 1; the original had no such bound.
//   - A client that went away: 499 with code 1900 (client_closed_request), written for the log
//     and the metrics; the client never reads it.
//   - Body over the limit: 413 with ErrBodyTooLarge (code 1400, api_body_too_large) for every
//     body, raw or decoded, where the original answered a raw overflow with 413/1900.
//   - A params or meta value that is not an object: "<field> is invalid" (400/1400) in JSON; in
//     multipart the original's ErrInvalidRequestParams / ErrInvalidRequestMeta (400/1400), also
//     for invalid JSON; an empty multipart params field means absent.
//   - Audit: every call of an audited operation that got past lookup is recorded, failures
//     included (Principal nil when authentication failed), after its answer is written. On the
//     server the root's bus sink publishes each record asynchronously as svc.api.request.audit
//     (AuditRecord.Event, an AuditEvent; wire-runtime §2.9 without resultMessage; rpc imports
//     no bus), and a host sink gets it too (AuditSinks). requestParams, requestMeta and resultData carry the values of
//     credential-like keys as RedactedAuditValue (AuditRedacts) and are each bounded by
//     MaxAuditValueBytes (TruncatedAuditValue past it).
//   - JSON strings are escaped as encoding/json does (<, >, & as \u003c…).
//   - Rate limiting: Retry-After is the exact wait until a call would be admitted, where the
//     original's fixed-window limiter sends the time until its window resets; refused calls are
//     not counted, where the original's limiter counts them. Both only ever shorten a client's
//     wait; the headers' names and meanings are the same.
//   - Outside /api (package app): what no route takes answers 404/1200 or 405/1900 with Allow,
//     and "/api/" is "/api", as the original's non-strict router and single error handler do.
package rpc

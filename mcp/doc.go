// Package mcp is the MCP endpoint of svc (spec §4.2, §5.1, §8.3 `svc.mcp.*`; wire facts in
// spec/wire-runtime.md §4; issue #18): the Model Context Protocol over Streamable HTTP at /mcp,
// built on the official Go SDK (github.com/modelcontextprotocol/go-sdk). User documentation:
// docs/mcp.md.
//
// # Routes
//
// /mcp, every method, mounted only when svc.mcp.enabled. The SDK's StreamableHTTPHandler in
// stateless mode answers POST (JSON-RPC, responses as server-sent events); GET and DELETE answer
// 405, as the protocol allows for a server without a standalone stream.
//
// # Authentication (spec §5.1)
//
// Unless svc.mcp.require_auth is explicitly false, every request needs "Authorization: Bearer
// <token>" (exactly two fields, the scheme in any case, no query parameter), verified by the
// shared bearer strategy of the rpc engine: the configured token type (JWT or opaque), expiry
// and revocation apply as on /api. Failures answer a plain-text 401 with "WWW-Authenticate:
// Bearer" (the original sends no challenge). The principal is bound to the call through the
// SDK's auth.TokenInfo (Extra "principal", with the token it was verified from, the client IP
// and the request id) and used by every tool; Principal(req.Extra) reads it. With require_auth
// = false, a request without a token is the anonymous user and a sent token is still verified;
// the anonymous user runs host tools and public operations only (issue #31: operation tools
// apply /api's access rule, below).
//
// # Tools, prompts, resources
//
//   - database_query {sql, params?} (wire-runtime §4): exactly one read on the data source
//     svc.mcp.query.data_source (default the primary) with ? placeholders, answered as one text
//     content with a JSON array of row objects (keys in the statement's column order, a name
//     given twice written twice; UTF-8 bytes as strings, other bytes base64) and, when
//     svc.mcp.query.max_rows cut the result, a second text content saying so. Arguments longer
//     than svc.mcp.query.max_sql_bytes (default 64 KiB, as sent) are refused before anything
//     is decoded (2806). It runs on db.ReadOnly.QueryTo (readonly.go), where the database
//     engine and the driver, not a text guard, refuse a second statement and anything but a
//     read and stop the statement at svc.mcp.query.timeout or when the caller leaves. The rows
//     are encoded as they are read (answer.go, issue #42) into one buffer that never grows past
//     svc.mcp.query.max_bytes: what is counted is every byte of the answer as the encoder
//     writes it — keys repeated per row, nulls, numbers, escapes, base64, the truncation note —
//     and the call stops with the byte-cap tool error (2805) at the first byte that does not
//     fit; no row is kept once encoded, and no row whose text and binary values alone pass the
//     cap is read (db.ReadOnly's own count, a lower bound of the encoding). The call's
//     deadline, timeout + 3 s, covers reading, encoding and, as the HTTP connection's write
//     deadline (limitWrite), writing the answer. The fast path (below) serves the tool and
//     escapes the answer into the connection in pieces (bench/mcpquery: idle + 22 MiB over ten rounds of
//     the forms and two answers just under the cap; through the SDK, which copies the
//     encoding several times, idle + 126 MiB for an escape-heavy answer at the cap). On
//     PostgreSQL and MySQL a login that could reach server files (superuser, FILE, …) is refused
//     on every call and logged at start. Visible to and callable by holders of
//     svc.mcp.query.permission only (default sys.mcp.database_query): ours, so that the agent
//     of any logged-in user cannot read the user table. docs/mcp.md lists what it can and
//     cannot do on each database.
//   - /api operations as tools (ours, svc.mcp.expose_operations): every bearer operation as
//     <resource>.<action> ("/" written ".", ".<version>" for versions other than v1), listed to
//     holders of its permission and run through rpc.Engine.CallAs as the caller: its principal
//     and the bearer token it presented, which the in-process request carries as its
//     Authorization header, so security.auth.logout revokes that token (issue #31). The
//     operation's access rule is /api's, whatever tools/list shows: the anonymous user of
//     require_auth = false gets the 401/1000 envelope as a tool error; then permission, rate
//     limit, validation, timeout, audit. The fast path runs the same handler. Operations
//     declared rpc.HTTPOnly (sys/storage upload_part: a multipart file part) are not tools; see
//     operations.go for the others left out.
//   - naming-master prompt (wire-runtime §4): no arguments, one user message holding our naming
//     guide (prompts/naming-master.md).
//   - Host providers (wire-runtime §4, provider registration): Options.Tools (NewTool,
//     TypedTool with schemas derived from Go types), Resources, ResourceTemplates and Prompts,
//     passed with svc.WithMCP; SchemaFor derives a schema for hand-built ones. No resources are
//     built in.
//
// tools/list is filtered per caller by a receiving middleware; host tools are listed to everyone
// who reaches the endpoint.
//
// # Configuration keys
//
// svc.mcp.enabled, svc.mcp.require_auth (spec §8.3); ours: svc.mcp.expose_operations,
// svc.mcp.query.permission, svc.mcp.query.data_source (default primary),
// svc.mcp.query.max_rows (default 1000), svc.mcp.query.max_bytes (default 4mib),
// svc.mcp.query.max_sql_bytes (default 64kib), svc.mcp.query.timeout (default 10s). Tables:
// none. Workers: none. Migrations: none.
//
// # Spec-compatibility choices
//
//   - Server identity: Options.Name/Version, else svc.app.name (else "svc-mcp-server") and the
//     application's build version (else the framework's); the original's two sources disagree
//     on the version.
//   - Stateless transport instead of the original's stateful sessions (SDK default): no
//     Mcp-Session-Id, so any node answers any request behind a round-robin balancer. Measured:
//     the SDK's stateful mode saves about 30 % of its per-call CPU but needs sticky routing;
//     stateless was kept, and tools/call of operations has a fast path (Performance below).
//     Server-to-client requests (sampling, elicitation) and the GET stream are not available.
//   - 401 carries WWW-Authenticate: Bearer; the original's "invalid token: …" text names our
//     message key instead of its authenticator's error.
//   - Tool error texts are message keys of messages/<lang>/mcp.json rendered in the process
//     language (English equals the original's texts); codes 2800–2806 identify them.
//   - The database's own error text is returned in "Query execution failed: …", as the
//     original does: it is the caller's own query.
//   - Error texts: a statement the database refused as not one read is "Only read-only (SELECT)
//     queries are permitted: …"; MariaDB reports a second statement and a write its grants do
//     not allow as a syntax error and "command denied", which arrive as "Query execution
//     failed: …". A result over the byte cap has its own text (2805), and so do arguments over
//     max_sql_bytes (2806). MySQL and MariaDB allow LOCK IN SHARE MODE in a read-only
//     transaction; its locks end with the rollback.
//   - Row objects keep the statement's column order and every column (until issue #42 a map
//     per row sorted the keys and kept the last value of a name given twice, which is also
//     what JSON parsers keep): the encoder writes the answer as it counts it, row by row.
//
// # Performance (issue #18)
//
// The SDK's stateless handler sets up a session, a JSON-RPC connection and a stream per request
// and decodes the message about nine times with a fresh 32 KiB buffer each: a tools/call of an
// operation cost 20–35× the same /api call. fastcall.go answers the hot request itself — one
// JSON-RPC tools/call of an operation tool or of database_query, in protocols up to 2026-07-28 (there with the
// SEP-2575 _meta triple and the Mcp-Method / Mcp-Name headers), no other _meta, no other Mcp-*
// headers — with the same sdk.ToolHandler and the bytes the SDK writes (TestFastCallMatchesSDK
// compares them for every form taken and every form left to the SDK); every other request is
// the SDK's. It reads the request's members with internal/jsontop (one json.Valid of the body,
// then member boundaries, as the /api envelope does) and remembers the _meta capability and
// client-info objects that decoded, by their bytes (metaSeen, at most 256), so a client's
// repeated calls are not decoded into the SDK's types each time. Measured (BenchmarkAPICall,
// BenchmarkToolsCall, BenchmarkToolsCallLegacy, BenchmarkToolsCallSDK; cpu-ns/op, 3 runs on 2
// shared cores, 2026-11-28): /api 14.8–18.0 µs, tools/call 28.0–34.2 µs as the SDK client sends
// it, 22.3–24.5 µs in protocol 2025-11-25, 380–500 µs through the SDK; bench/run.sh's mcp row
// (alternating rounds, the medians) measured 1.8× twice (target ≤ 2×; 2.0–2.8× before these two
// changes). The fast path runs no receiving middleware a host adds
// through Server() and does not see operation tools removed or replaced there: such a host sets
// Options.SDKOnly.
package mcp

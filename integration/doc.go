// Package integration is the integration module, part 1 (issue #20): the definitions an
// integration runs on — contracts, external systems, adapters, routes and code maps — managed
// through /api by the original's client, the secrets of systems sealed at rest, the invocation
// log recorder and the per-node statistics. The script runtime, outbound invoker, inbound
// gateway and integration/ops build on it (issue #21).
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
//
// Validation and codes in the original's order: contract schemas compile as JSON Schema
// draft 2020-12 (santhosh-tekuri/jsonschema/v6; 2615), labels (2626); system outbound scheme
// known (2614), auth shapes (2617), "******" keeps the stored secret (none stored: 2617, or
// 2620 for the data-source password), absolute baseUrl (2619), data source kind/mode (2620),
// envelope needs baseUrl and a script (2625), kept secrets must open with the configured key
// (2617); adapter direction (2621) and a non-empty script
// (2616; compiled by part 2); route references (2618); code-map policy and index — a value
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
// direction); the composition root hands it to sys/monitor (spec §2.5).
//
// # Config keys (spec §8.3)
//
// svc.integration.auto_migrate, secret_key, secret_algorithm, log.mode, log.capture_limit,
// log.mask_fields, log.retention used here; run_timeout, max_response_body and
// inbound.rate_limit belong to part 2.
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
package integration

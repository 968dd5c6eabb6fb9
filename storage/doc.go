// Package storage is the storage module of svc: resumable multipart uploads, a file registry,
// the download proxy, background clean-up, and an adoption API for host code. It implements
// spec §2.4, §3, §4.1–§4.2, §7 and §8.2–§8.3 with the wire facts of wire-core §7, so the
// original framework's React resumable uploader works against it unmodified.
//
// # Resources and actions (POST /api, Bearer, version v1)
//
//	sys/storage       init_upload      {filename, size, contentType?, public?}
//	                                   → {key, claimId, originalFilename, partSize, partCount, expiresAt}
//	                  upload_part      multipart: resource, action, version, params {claimId, partNumber}, file
//	                                   → {partNumber, size}; 10 min timeout
//	                  list_parts       {claimId} → {parts: [{partNumber, size}]}
//	                  complete_upload  {claimId} → {bucket, key, eTag, size, contentType, lastModified,
//	                                   metadata?, originalFilename}; 5 min timeout
//	                  abort_upload     {claimId} → null
//	sys/storage/file  resolve          {keys: 1..200} → {files: [{key, originalFilename, contentType, size,
//	                                   status, uploadedAt, uploadedBy}]}
//	                  find_page        sys.storage.file.query (QueryPermission; svc addition, issue #35):
//	                                   FileSearch {keyword, status, contentType (prefix), uploadedBy,
//	                                   public}, meta page/size/sort → {page, size, total, items: [FileView]};
//	                                   default: every status but deleted, newest upload first
//	                  delete           sys.storage.file.delete (DeletePermission), audited: {key} → null;
//	                                   queues the object (reason deleted, FileView.deleting until the
//	                                   delete worker ran); unknown or deleted key 2001
//
// Every action has the engine default rate limit (spec §4.1, §8.1; wire-core §7.2), upload_part
// too unless svc.storage.upload_part_rate_limit (ours) gives it its own maximum per engine period.
// upload_part is declared rpc.HTTPOnly (its part is a multipart file): it is served over /api
// only, never in process, so the MCP endpoint offers no tool for it (issue #31).
// Every storage code 2200–2220 is in errors.go; each action checks them in the order of wire-core
// §7.2 (list_parts: 1100, 2203, 2204, 2212, without the size cap 2205); all are HTTP 200.
// Unknown and foreign claim ids both answer 403/1100, so a claim's existence is not revealed.
//
// # Routes
//
//	GET  /storage/files/{key...}   download proxy (ServeFile)
//	HEAD /storage/files/{key...}
//
// # Configuration (svc.storage, config.Storage)
//
// provider (memory, filesystem, objstore), auto_migrate, objstore.{endpoint, access_key,
// secret_key, bucket, region, use_ssl}, filesystem.{root, sync}, max_upload_size, claim_ttl,
// max_pending_claims, allow_public_uploads, upload_part_rate_limit (ours; 0 = engine default),
// sweep_interval, sweep_batch_size, orphan_retention, delete_worker_interval, delete_batch_size,
// delete_concurrency, delete_max_attempts, delete_lease_window. The config package applies the
// defaults (non-positive values take them).
//
// # Tables (migrations/{postgres,mysql,sqlite}/001_init.sql, run when auto_migrate is on)
//
//	sys_storage_upload_claim    one row per pending or uploaded upload
//	sys_storage_upload_part     recorded parts of pending uploads (ETags stay here)
//	sys_storage_pending_delete  objects and sessions the delete worker must remove, with leases
//	sys_storage_file            the file registry: uploaded, claimed or deleted
//
// # Workers
//
//	storage.sweeper  every sweep_interval: Sweep (expired claims recovered or queued, orphans)
//	storage.delete   every delete_worker_interval: ProcessDeletes (leased, backoff, dead letter)
//
// Both are safe on any number of nodes: every change is conditional on the state it expects,
// and queue rows are leased with FOR UPDATE SKIP LOCKED (SQLite: its write lock).
//
// # Metrics
//
// metrics.go registers on app.Platform.Metrics (served with svc.metrics.enabled, docs/operations.md)
// svc_storage_active_claims and svc_storage_delete_queue_depth, read from Stats at scrape time,
// and svc_storage_uploads_total, svc_storage_upload_bytes_total and
// svc_storage_delete_dead_letters_total, counted from the module's own events (delivered after
// commit) in the consumer group svc-ops-metrics. With Deps.Metrics nil (metrics off) it
// registers and subscribes to nothing.
//
// # Events (Publisher, called inside the transaction that makes the event true)
//
//	svc.storage.file.uploaded       {fileKey, size, contentType, originalFilename, uploadedBy}
//	svc.storage.file.claimed        {fileKey}
//	svc.storage.file.deleted        {fileKey, reason}
//	svc.storage.delete.dead_letter  {pendingDeleteId, fileKey, reason, attempts, lastError}
//
// On the server the Publisher is the event bus (BusPublisher over app.Platform.Events, unless
// Options.Events is set): each event is published with event.InTx(tx), and inTx gives every
// attempt of a retried transaction its own event.TxScope, so an attempt that rolled back
// delivers nothing and the one that committed delivers (tx_memory) or wakes the outbox relay.
// New calls RequireTransactional("svc.storage.*"): a routing that sends storage events to a
// non-transactional transport fails startup (wire-core §7.8), naming the rule. The payload
// types have EventType methods for event.SubscribeTyped.
//
// # Lifecycle (spec §3 and wire-core §7.8)
//
// init_upload writes a pending claim, then opens the backend session. upload_part streams the part
// to the backend and upserts its record (re-sending replaces). A part re-sent while an earlier
// transfer of it is still open on this node (a client whose connection stalled mid-part, whose
// uploader sent the part again) supersedes that transfer at once (backend.Transfers): the newer
// one never waits on the stalled body, and the older one writes nothing more, records nothing
// and answers ErrUploadPartSuperseded (HTTP 409, code 1900; the original has no such case). A
// stalled body itself ends with svc.app.body_read_idle_timeout, a trickled one with
// svc.app.body_min_rate (app/bodyidle.go). complete_upload rebuilds the
// manifest from the records, checks the summed size first (2218 changes nothing), asks the
// backend to assemble, then in one transaction marks the claim uploaded, clears the parts and
// registers the file; a repeat answers the same object. A completion that finds its claim
// released by the sweeper meanwhile (still assembling sweep_interval after the expiry, or swept
// by a node whose clock runs ahead) deletes what it assembled and answers 2204, never an object
// the delete worker is about to remove. abort_upload deletes the claim and queues
// the object and session in one transaction. Host code adopts uploaded files (Adopt, Replace,
// Delete) inside its own transaction; like the original, adoption answers plain errors without a
// code (wire-core §2.4, §7.8): ErrClaimNotFound, and ErrAccessDenied for a nil or anonymous
// principal. The sweeper recovers expired claims whose object exists
// (a completion that crashed before recording it) and queues the rest; with orphan_retention > 0
// it also queues uploads never adopted. The delete worker aborts sessions, deletes objects, marks
// the registry and publishes.
//
// # Streaming and memory
//
// A part goes from the request body to the backend through one pooled 256 KiB buffer
// (backend.CopyBufferSize) and is never held whole in memory. The part size is enforced while
// streaming (partReader): every part but the last must be exactly partSize, so the backend gets
// its exact length up front; the last part's length is known only when the engine spooled it,
// else the objstore backend spools it to a temporary file (at most one part size of disk). Per
// in-flight part the module holds that buffer, plus minio-go's 64 KiB signing chunk on the
// objstore backend over plain HTTP. Measured: peak RSS 5–8 MiB above idle for a 256 MiB upload
// with 3 parts in flight (bench/upload).
//
// # Compatibility choices (spec README, rule 5)
//
//   - resolve is action "resolve" on resource "sys/storage/file" (the spec writes file/resolve).
//   - Keys use the UTC date (the original: the server's local date); all stored times are UTC.
//   - contentType sanitation also refuses image/svg+xml (script-capable) and accepts a few more
//     inert types (text/plain, text/csv, Office documents, 7z, rar); parameters are dropped and
//     the type is lower-cased; extension detection uses a built-in table, not the host's
//     mime.types, so it is the same on every machine.
//   - The pending-claim limit counts only claims that have not expired.
//   - A part that violates the size rules is forgotten (its record removed), so completion waits
//     for a good copy; a completion whose records no longer match the backend (a part replaced
//     behind the server's back) answers 2216 rather than assembling stale bytes.
//   - complete_upload checks the summed part sizes before assembling: a mismatch (2218) leaves the
//     claim, its session and its parts intact, and the client may re-send the last part.
//   - ErrAbortFailed (2219) is declared but never returned: abort queues the backend clean-up.
//   - A claim whose session id was lost in a crash is cleaned by key: AbortMultipart with an
//     empty id aborts every session of the key.
//   - The proxy adds Range (single ranges; several ranges get the whole object), ETag and
//     Last-Modified with If-None-Match / If-Modified-Since / If-Range, on pub/ and private keys;
//     private responses stay "private, no-store".
//   - A key containing ".." anywhere answers 2200, also inside a segment ("a..b"), as wire-core
//     §7.7 says; planned keys never contain one (a UUID and an extension of one dot and letters
//     or digits). A path with a literal "//", "/./" or "/../" is redirected by net/http's
//     ServeMux with 307 to the cleaned path before the proxy sees it (the original answered
//     2200); percent-encoded ones (%2F, %2E) and a trailing "/" reach the proxy and answer 2200.
//   - Without credentials a private download runs the ACL with no principal (the default ACL
//     refuses: 403/1100); bad credentials answer the authenticator's 401.
//   - The default FileACL lets the uploader, the system principal and holders of ReadPermission
//     ("sys.storage.file.read", Options.ReadPermission) read private files; the original's
//     default allowed only pub/.
//   - resolve's uploadedAt is "2006-01-02 15:04:05" in the server's local zone, as the original.
//   - Filesystem objects are not fsynced unless svc.storage.filesystem.sync (our key) is set
//     (see package filesystem): they survive a process crash, not a power loss.
//   - The filesystem part size stays 4 MiB and objstore's 16 MiB (wire-core §7.1); see
//     docs/modules/storage.md for the measurements behind keeping them.
//   - upload_part_rate_limit is our key: the original gives upload_part the engine default like
//     every action, which admits only 100 parts per 5 minutes (a 1 GiB upload is 256 parts of
//     4 MiB); the shipped configs/application.toml sets 10000.
//   - A key keeps the filename's extension only up to 32 characters (claim.go, else ".bin"; the
//     original has no bound): a longer suffix names no file type, and keys, which end up in URLs
//     and business records, stay short and predictable (at most 85 characters).
//   - An empty final part is refused with 2215: the last part of a plan always has at least one
//     byte (size ≥ 1, partCount = ceil(size / partSize)), so an empty one is a client error that
//     would otherwise surface only at completion, as 2218.
//   - Tables (wire-core §7.10): upload_id is varchar(1024), not 128, in claim and pending_delete:
//     the S3 API puts no bound on an upload id, and a truncated one would strand its session.
//   - Tables: the part etag is varchar(128) with an empty-string default, not varchar(64): an
//     ETag is the backend's opaque string (a quoted SHA-256 hex alone is 66 characters).
//   - Tables: pending_delete adds lease_token and last_error: the lease lets one node of many
//     own a queued delete, and last_error is the class the dead-letter event reports.
//   - Tables: the claim index is (status, expires_at), not (expires_at, status), so the
//     sweeper's "status = ? AND expires_at < ? ORDER BY expires_at" reads one index range.
//   - Tables: the migration does not back-fill sys_storage_file from uploaded claims: the
//     registry is created with the claims in the first migration, so none exist without it.
package storage

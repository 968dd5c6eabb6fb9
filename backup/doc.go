// Package backup is the backup module of svc (issue #47 part 1): one archive holds one
// consistent point in time of what the embedded default keeps — the SQLite database and the
// uploaded files its rows reference — with a manifest and checksums, written to a folder or the
// storage backend, scheduled and pruned through the cron store, and restored by `svc restore`
// with the server stopped. On PostgreSQL or MySQL/MariaDB the database's own tools own its
// backups (pg_dump / mysqldump, the commands shown by DatabaseAdvice); the module still
// archives the files.
//
// # Resources (POST /api, Bearer, version v1)
//
//	sys/backup  find_page  {status?}, meta page/size → {page, size, total, items: [Backup]},
//	                       newest first                                   sys.backup.query
//	            get        {id} → Backup (2001 when unknown)                sys.backup.query
//	            info       {} → {destination, location, encrypted, databaseIncluded, database,
//	                       advice?, schedule}                              sys.backup.query
//	            create     {destination?} → Backup (running; the backup continues in the
//	                       background, 2950 when one runs on any node)     sys.backup.create, audited
//	            delete     {id} → null (the archive and its row; 2953 while running)
//	                                                                        sys.backup.delete, audited
//	            download   {id} → {url, name, size, expiresAtUnixMs}: a link to GET
//	                       /backup/files/{id}?token=… valid 10 minutes     sys.backup.download, audited
//	            restore    {id} → {verified, snapshotAtUnixMs, svcVersion, schemaVersions,
//	                       entries, totalBytes, missing, steps}: reads the whole archive and
//	                       verifies it as `svc restore` does (2951 {{reason}} when refused),
//	                       then answers the commands to run; timeout 30 min sys.backup.restore, audited
//
// Every action has its own permission token and the engine default rate limit; the four that
// change or hand out data are audited (rpc.Audit) like every other /api operation. Codes
// 2950 ErrBusy, 2951 ErrArchiveInvalid, 2953 ErrBackupNotFinished, all HTTP
// 200; messages in messages/{en,zh-CN}/backup.json.
//
// # Routes
//
//	GET /backup/files/{id}?token=…   the archive, for the holder of a download link
//
// The download link is the equivalent of the storage proxy's ACL for archives (which may live
// in a folder the proxy cannot serve): download checks sys.backup.download and is audited; it
// stores the SHA-256 of a random 256-bit token on the row (so any node serves the link) with a
// 10-minute expiry; the route answers 403/1100 for an unknown id, a wrong or expired token or a
// backup that has not succeeded. The link may be used more than once until it expires (a
// browser's retried download).
//
// # Configuration (svc.backup, config.Backup; ours)
//
// destination ("folder" default, or "storage": the configured storage backend, S3 when
// storage is on S3), dir (default ./data/backups: the folder destination, and where snapshots
// are staged), storage_prefix (default "backups"), encryption_key (secret; 64 hex digits or
// base64 of 32 bytes; empty = archives not encrypted). Schedule and retention are not
// configuration: they are the params of the cron schedule svc.backup.
//
// # Tables (migrations/{postgres,mysql,sqlite}/001_init.sql, run at startup)
//
//	sys_backup        one row per backup: name, destination, location, status running |
//	                  succeeded | failed, error, size, file_count, db_included, encrypted,
//	                  trigger_kind manual | schedule | cli, created_by, node_id, started/finished
//	                  epoch ms, the download token's hash and expiry
//	sys_backup_lease  one row ('backup'): the cluster-wide lease — one backup at a time
//
// The lease is taken with one conditional UPDATE (free, expired, or already ours) for 2 minutes
// and renewed every 30 s while the backup runs; a node that dies frees it within 2 minutes. The
// lease holder marks every other running row failed ("interrupted") and removes the staging
// directory and .partial file a killed backup left in dir.
//
// # Workers and the scheduled job
//
// No worker of its own. The composition root adds the cron job svc.backup (params {keepLast,
// keepDays, destination?}; JobParams, checked on save and described on the Cron page) with a
// default schedule "svc.backup": cron "0 3 * * *" UTC, misfire skip, concurrency forbid,
// created paused — an operator resumes it on the Cron page (or `svc cron resume svc.backup`)
// and edits its trigger and params there. A run takes a backup (waiting for it) then prunes:
// a succeeded backup beyond the newest keepLast, or older than keepDays, is deleted (0 = no
// limit); the newest succeeded backup is always kept. Failed rows stay until deleted. A run
// that finds the lease taken fails with 2950 (another node's backup is running).
//
// A backup started from /api (Start) or by the job runs on an OS thread of its own whose nice
// value is 10 (priority_linux.go, the bypass backup.nice, Linux only), so the server's request
// threads come first when the cores are busy; the thread is discarded when the backup ends.
// `svc backup` on the CLI (Create from a process that serves nothing) runs at normal priority.
//
// # What an archive holds (one point in time)
//
// On SQLite the backup first copies the database with SQLite's online backup API
// (db.DB.Snapshot, sqlite3_backup_step(-1)) into dir/.staging-<id>/: every page in one step
// under one read transaction, so the copy is the database as of its start while other
// connections keep writing (they are never waited for, and the copy is never restarted); pages
// are copied as they are, not rewritten row by row as VACUUM INTO would; never a file copy.
// The staging copy is written without journal or fsync (the archive is what is made durable)
// and removed as soon as it is in the archive. The objects to archive are read from the snapshot's own storage
// rows (sys_storage_file not deleted, and sys_storage_upload_claim uploaded): uploads completed
// after the snapshot point are not referenced and not archived; every object referenced is.
// Objects are immutable per key, so reading them after the point is reading them as of the
// point, except for one deleted after it by the delete worker before the backup read it: it is
// listed in the manifest's "missing" and its row is restored without a file. On a server
// database the live rows are read at the start (no snapshot: the database's own dump is the
// database's point in time).
//
// # Archive format (FormatVersion 2)
//
// A POSIX (PAX) tar stream, not compressed (speed: the target is half the speed of cp):
//
//	svc-backup/database.sqlite        the snapshot (SQLite only)
//	svc-backup/files/<object key>     each referenced object, in key order
//	svc-backup/manifest.json          Manifest: format, id, snapshotAt, svcVersion, appVersion,
//	                                  gitCommit (app.BuildInfo), database, databaseIncluded,
//	                                  schemaVersions (max version per module from
//	                                  svc_schema_migrations), entries [{name, kind, key, size,
//	                                  crc32c}], missing, totalBytes
//	svc-backup/TRAILER                "svc-backup-trailer v1\nmanifest-sha256 <hex>\nentries <n>\n"
//
// Each content entry's header carries the PAX record "SVC.checksum=crc32c", and the manifest
// lists its CRC-32C (Castagnoli, computed in the copy loop, 1 MiB chunks). The checksum finds
// corruption and truncation; it is not what finds forgery: whoever rewrites an unencrypted
// archive's entries can rewrite its manifest and trailer too, whatever the hash, and an
// encrypted archive's chunks are authenticated by AES-GCM. Format 1 summed entries with SHA-256
// (the field "sha256", no PAX record); this binary still verifies and restores it, computing for
// each entry the checksum its header names and requiring the manifest to list exactly that one.
// The manifest is written last, after every entry was summed while written, and the trailer
// after it; then the tar end blocks. A succeeded backup logs "backup succeeded" with the time
// of each phase (Phases). An archive is written to dir/.<name>.partial, fsynced and renamed
// (the directory fsynced) — or, to storage, streamed into one atomic Put — so a name
// without ".partial" always holds a whole archive. A reader accepts an archive only when the
// trailer is present and matches the manifest, every entry's size and checksum match, entries
// are exactly those listed, in order, and nothing follows the trailer; a killed backup's file
// has no trailer (ErrArchivePartial).
//
// With an encryption key the whole tar stream is wrapped ("<name>.tar.enc"): a 24-byte header
// ("SVCBAKE1", the first 8 bytes of SHA-256(key) as key id, an 8-byte random nonce prefix),
// then chunks of at most 1 MiB of plaintext, each a 4-byte big-endian word (bit 31 marks the
// last chunk, bits 0–30 the plaintext length) and the AES-256-GCM sealing under the nonce
// prefix ‖ the 32-bit chunk counter, with header ‖ word as additional data. Reordered, dropped,
// altered or truncated chunks fail authentication; a stream ending before its flagged last
// chunk is refused; a different key is named (ErrWrongKey) without trying to decrypt.
//
// # Restore
//
// Restore (`svc restore ARCHIVE`, ARCHIVE a file or storage:KEY) refuses to run while a server
// holds the database: every server on SQLite holds an flock on "<database>.lock" from Start to
// Stop (released by the kernel even on SIGKILL), and restore takes the same lock for its whole
// run, so a server cannot start meanwhile. It then reads the whole archive into a staging
// directory beside the database (".svc-restore-<time>": the database file, and the objects
// through a filesystem backend when storage is on the filesystem), verifies everything above,
// checks each module's schema version against the newest migration this binary has (a newer
// one is refused: upgrade first; a module this binary lacks is accepted), runs SQLite's
// integrity check on the staged database and checks that every file row it holds has its
// object in the archive (or listed missing). Any refusal removes the staging directory and
// touches nothing current. Only then it moves the current database (with -wal and -shm) and
// filesystem root into "svc-replaced-<time>" beside the database and renames the staged ones
// in (moving everything back if a rename fails). On S3 the objects are written after the swap
// in a second verified pass (keys are immutable, so existing objects are rewritten with the
// same bytes; nothing is set aside in the bucket). The set-aside directory stays until the
// operator removes it, after the restored server answers GET /readyz (docs/operations.md).
//
// The /api action restore verifies and answers the steps; the running server does not replace
// its own data (the simple, honest option of the issue). A restore of an archive holding a
// database onto a server database is refused.
//
// # Spec
//
// Not in the original framework or the spec (issue #47, ours); it reads storage's tables
// (wire-core §7.10) and cron's built-in job mechanism (wire-runtime §1.1 default schedules).
package backup

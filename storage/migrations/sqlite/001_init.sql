-- Storage module tables (wire-core §7.10). Times are UTC text written by the server's clock;
-- the declared type TIMESTAMP makes the driver read them back as times.

CREATE TABLE sys_storage_upload_claim (
    id                TEXT      NOT NULL PRIMARY KEY,
    created_at        TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    created_by        TEXT      NOT NULL DEFAULT 'system',
    object_key        TEXT      NOT NULL,
    upload_id         TEXT      NOT NULL DEFAULT '',
    size              INTEGER   NOT NULL DEFAULT 0,
    content_type      TEXT      NOT NULL DEFAULT '',
    original_filename TEXT      NOT NULL DEFAULT '',
    status            TEXT      NOT NULL DEFAULT 'pending',
    public            BOOLEAN   NOT NULL DEFAULT FALSE,
    part_size         INTEGER   NOT NULL DEFAULT 0,
    part_count        INTEGER   NOT NULL DEFAULT 0,
    expires_at        TIMESTAMP NOT NULL,
    CONSTRAINT uk_sys_storage_upload_claim_object_key UNIQUE (object_key)
);
CREATE INDEX idx_sys_storage_upload_claim_status_expires ON sys_storage_upload_claim (status, expires_at);
CREATE INDEX idx_sys_storage_upload_claim_owner_status ON sys_storage_upload_claim (created_by, status);

CREATE TABLE sys_storage_upload_part (
    id          TEXT      NOT NULL PRIMARY KEY,
    claim_id    TEXT      NOT NULL REFERENCES sys_storage_upload_claim (id) ON DELETE CASCADE,
    part_number INTEGER   NOT NULL,
    etag        TEXT      NOT NULL DEFAULT '',
    size        INTEGER   NOT NULL DEFAULT 0,
    created_at  TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    CONSTRAINT uk_sys_storage_upload_part_claim_number UNIQUE (claim_id, part_number)
);

CREATE TABLE sys_storage_pending_delete (
    id              TEXT      NOT NULL PRIMARY KEY,
    object_key      TEXT      NOT NULL,
    upload_id       TEXT      NOT NULL DEFAULT '',
    reason          TEXT      NOT NULL DEFAULT 'replaced',
    attempts        INTEGER   NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    lease_token     TEXT      NOT NULL DEFAULT '',
    last_error      TEXT      NOT NULL DEFAULT '',
    created_at      TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    CONSTRAINT uk_sys_storage_pending_delete_key_reason UNIQUE (object_key, reason)
);
CREATE INDEX idx_sys_storage_pending_delete_next ON sys_storage_pending_delete (next_attempt_at);

CREATE TABLE sys_storage_file (
    id                TEXT      NOT NULL PRIMARY KEY,
    created_at        TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    created_by        TEXT      NOT NULL DEFAULT 'system',
    object_key        TEXT      NOT NULL,
    original_filename TEXT      NOT NULL DEFAULT '',
    content_type      TEXT      NOT NULL DEFAULT '',
    size              INTEGER   NOT NULL DEFAULT 0,
    public            BOOLEAN   NOT NULL DEFAULT FALSE,
    status            TEXT      NOT NULL DEFAULT 'uploaded',
    started_at        TIMESTAMP NOT NULL,
    claimed_at        TIMESTAMP NULL,
    deleted_at        TIMESTAMP NULL,
    delete_reason     TEXT      NOT NULL DEFAULT '',
    CONSTRAINT uk_sys_storage_file_object_key UNIQUE (object_key)
);
CREATE INDEX idx_sys_storage_file_status_created ON sys_storage_file (status, created_at);
CREATE INDEX idx_sys_storage_file_owner_created ON sys_storage_file (created_by, created_at);

-- Storage module tables (wire-core §7.10). Times are UTC, written by the server's clock.

CREATE TABLE sys_storage_upload_claim (
    id                varchar(128)  NOT NULL PRIMARY KEY,
    created_at        timestamp     NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by        varchar(128)  NOT NULL DEFAULT 'system',
    object_key        varchar(512)  NOT NULL,
    upload_id         varchar(1024) NOT NULL DEFAULT '',
    size              bigint        NOT NULL DEFAULT 0,
    content_type      varchar(128)  NOT NULL DEFAULT '',
    original_filename varchar(255)  NOT NULL DEFAULT '',
    status            varchar(16)   NOT NULL DEFAULT 'pending',
    public            boolean       NOT NULL DEFAULT false,
    part_size         bigint        NOT NULL DEFAULT 0,
    part_count        integer       NOT NULL DEFAULT 0,
    expires_at        timestamp     NOT NULL,
    CONSTRAINT uk_sys_storage_upload_claim_object_key UNIQUE (object_key)
);
CREATE INDEX idx_sys_storage_upload_claim_status_expires ON sys_storage_upload_claim (status, expires_at);
CREATE INDEX idx_sys_storage_upload_claim_owner_status ON sys_storage_upload_claim (created_by, status);

CREATE TABLE sys_storage_upload_part (
    id          varchar(128) NOT NULL PRIMARY KEY,
    claim_id    varchar(128) NOT NULL,
    part_number integer      NOT NULL,
    etag        varchar(128) NOT NULL DEFAULT '',
    size        bigint       NOT NULL DEFAULT 0,
    created_at  timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    CONSTRAINT uk_sys_storage_upload_part_claim_number UNIQUE (claim_id, part_number),
    CONSTRAINT fk_sys_storage_upload_part_claim FOREIGN KEY (claim_id)
        REFERENCES sys_storage_upload_claim (id) ON DELETE CASCADE
);

CREATE TABLE sys_storage_pending_delete (
    id              varchar(128)  NOT NULL PRIMARY KEY,
    object_key      varchar(512)  NOT NULL,
    upload_id       varchar(1024) NOT NULL DEFAULT '',
    reason          varchar(128)  NOT NULL DEFAULT 'replaced',
    attempts        integer       NOT NULL DEFAULT 0,
    next_attempt_at timestamp     NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    lease_token     varchar(64)   NOT NULL DEFAULT '',
    last_error      varchar(32)   NOT NULL DEFAULT '',
    created_at      timestamp     NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    CONSTRAINT uk_sys_storage_pending_delete_key_reason UNIQUE (object_key, reason)
);
CREATE INDEX idx_sys_storage_pending_delete_next ON sys_storage_pending_delete (next_attempt_at);

CREATE TABLE sys_storage_file (
    id                varchar(128) NOT NULL PRIMARY KEY,
    created_at        timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by        varchar(128) NOT NULL DEFAULT 'system',
    object_key        varchar(512) NOT NULL,
    original_filename varchar(255) NOT NULL DEFAULT '',
    content_type      varchar(128) NOT NULL DEFAULT '',
    size              bigint       NOT NULL DEFAULT 0,
    public            boolean      NOT NULL DEFAULT false,
    status            varchar(16)  NOT NULL DEFAULT 'uploaded',
    started_at        timestamp    NOT NULL,
    claimed_at        timestamp    NULL,
    deleted_at        timestamp    NULL,
    delete_reason     varchar(128) NOT NULL DEFAULT '',
    CONSTRAINT uk_sys_storage_file_object_key UNIQUE (object_key)
);
CREATE INDEX idx_sys_storage_file_status_created ON sys_storage_file (status, created_at);
CREATE INDEX idx_sys_storage_file_owner_created ON sys_storage_file (created_by, created_at);

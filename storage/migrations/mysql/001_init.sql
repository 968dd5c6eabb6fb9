-- Storage module tables (wire-core §7.10). Times are UTC, written by the server's clock.

CREATE TABLE sys_storage_upload_claim (
    id                VARCHAR(128)  NOT NULL,
    created_at        DATETIME(6)   NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by        VARCHAR(128)  NOT NULL DEFAULT 'system',
    object_key        VARCHAR(512)  NOT NULL,
    upload_id         VARCHAR(1024) NOT NULL DEFAULT '',
    size              BIGINT        NOT NULL DEFAULT 0,
    content_type      VARCHAR(128)  NOT NULL DEFAULT '',
    original_filename VARCHAR(255)  NOT NULL DEFAULT '',
    status            VARCHAR(16)   NOT NULL DEFAULT 'pending',
    public            BOOLEAN       NOT NULL DEFAULT FALSE,
    part_size         BIGINT        NOT NULL DEFAULT 0,
    part_count        INT           NOT NULL DEFAULT 0,
    expires_at        DATETIME(6)   NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uk_sys_storage_upload_claim_object_key (object_key),
    KEY idx_sys_storage_upload_claim_status_expires (status, expires_at),
    KEY idx_sys_storage_upload_claim_owner_status (created_by, status)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE sys_storage_upload_part (
    id          VARCHAR(128) NOT NULL,
    claim_id    VARCHAR(128) NOT NULL,
    part_number INT          NOT NULL,
    etag        VARCHAR(128) NOT NULL DEFAULT '',
    size        BIGINT       NOT NULL DEFAULT 0,
    created_at  DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    UNIQUE KEY uk_sys_storage_upload_part_claim_number (claim_id, part_number),
    CONSTRAINT fk_sys_storage_upload_part_claim FOREIGN KEY (claim_id)
        REFERENCES sys_storage_upload_claim (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE sys_storage_pending_delete (
    id              VARCHAR(128)  NOT NULL,
    object_key      VARCHAR(512)  NOT NULL,
    upload_id       VARCHAR(1024) NOT NULL DEFAULT '',
    reason          VARCHAR(128)  NOT NULL DEFAULT 'replaced',
    attempts        INT           NOT NULL DEFAULT 0,
    next_attempt_at DATETIME(6)   NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    lease_token     VARCHAR(64)   NOT NULL DEFAULT '',
    last_error      VARCHAR(32)   NOT NULL DEFAULT '',
    created_at      DATETIME(6)   NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    UNIQUE KEY uk_sys_storage_pending_delete_key_reason (object_key, reason),
    KEY idx_sys_storage_pending_delete_next (next_attempt_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE sys_storage_file (
    id                VARCHAR(128) NOT NULL,
    created_at        DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by        VARCHAR(128) NOT NULL DEFAULT 'system',
    object_key        VARCHAR(512) NOT NULL,
    original_filename VARCHAR(255) NOT NULL DEFAULT '',
    content_type      VARCHAR(128) NOT NULL DEFAULT '',
    size              BIGINT       NOT NULL DEFAULT 0,
    public            BOOLEAN      NOT NULL DEFAULT FALSE,
    status            VARCHAR(16)  NOT NULL DEFAULT 'uploaded',
    started_at        DATETIME(6)  NOT NULL,
    claimed_at        DATETIME(6)  NULL,
    deleted_at        DATETIME(6)  NULL,
    delete_reason     VARCHAR(128) NOT NULL DEFAULT '',
    PRIMARY KEY (id),
    UNIQUE KEY uk_sys_storage_file_object_key (object_key),
    KEY idx_sys_storage_file_status_created (status, created_at),
    KEY idx_sys_storage_file_owner_created (created_by, created_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

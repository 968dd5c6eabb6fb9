-- Event bus tables (wire-runtime §2.4, §2.5). Times are UTC, written by the server's clock.

CREATE TABLE sys_event_outbox (
    id             VARCHAR(36)  NOT NULL,
    created_at     DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by     VARCHAR(32)  NOT NULL DEFAULT 'system',
    event_id       VARCHAR(64)  NOT NULL,
    event_type     VARCHAR(128) NOT NULL,
    source         VARCHAR(128) NOT NULL DEFAULT '',
    trace_id       VARCHAR(64),
    span_id        VARCHAR(64),
    correlation_id VARCHAR(128),
    headers        JSON,
    payload        JSON         NOT NULL,
    status         VARCHAR(16)  NOT NULL DEFAULT 'pending',
    retry_count    INT          NOT NULL DEFAULT 0,
    last_error     TEXT,
    processed_at   DATETIME(6),
    retry_after    DATETIME(6),
    occurred_at    DATETIME(6)  NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uk_sys_event_outbox_event_id (event_id),
    KEY idx_sys_event_outbox_status_retry (status, retry_after, created_at),
    KEY idx_sys_event_outbox_type_created (event_type, created_at),
    KEY idx_sys_event_outbox_status_processed (status, processed_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE sys_event_inbox (
    id             VARCHAR(36)  NOT NULL,
    created_at     DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by     VARCHAR(32)  NOT NULL DEFAULT 'system',
    event_id       VARCHAR(64)  NOT NULL,
    consumer_group VARCHAR(128) NOT NULL,
    status         VARCHAR(16)  NOT NULL DEFAULT 'processing',
    lock_id        VARCHAR(36),
    locked_until   DATETIME(6),
    completed_at   DATETIME(6),
    PRIMARY KEY (id),
    UNIQUE KEY uk_sys_event_inbox_group_event (consumer_group, event_id),
    KEY idx_sys_event_inbox_completed (completed_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

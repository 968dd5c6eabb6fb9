-- Event bus tables (wire-runtime §2.4, §2.5). Times are UTC text written by the server's clock;
-- the declared type TIMESTAMP makes the driver read them back as times.

CREATE TABLE sys_event_outbox (
    id             TEXT      NOT NULL PRIMARY KEY,
    created_at     TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    created_by     TEXT      NOT NULL DEFAULT 'system',
    event_id       TEXT      NOT NULL,
    event_type     TEXT      NOT NULL,
    source         TEXT      NOT NULL DEFAULT '',
    trace_id       TEXT,
    span_id        TEXT,
    correlation_id TEXT,
    headers        TEXT,
    payload        TEXT      NOT NULL,
    status         TEXT      NOT NULL DEFAULT 'pending',
    retry_count    INTEGER   NOT NULL DEFAULT 0,
    last_error     TEXT,
    processed_at   TIMESTAMP,
    retry_after    TIMESTAMP,
    occurred_at    TIMESTAMP NOT NULL,
    CONSTRAINT uk_sys_event_outbox_event_id UNIQUE (event_id)
);
CREATE INDEX idx_sys_event_outbox_status_retry ON sys_event_outbox (status, retry_after, created_at);
CREATE INDEX idx_sys_event_outbox_type_created ON sys_event_outbox (event_type, created_at);
CREATE INDEX idx_sys_event_outbox_status_processed ON sys_event_outbox (status, processed_at);

CREATE TABLE sys_event_inbox (
    id             TEXT      NOT NULL PRIMARY KEY,
    created_at     TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    created_by     TEXT      NOT NULL DEFAULT 'system',
    event_id       TEXT      NOT NULL,
    consumer_group TEXT      NOT NULL,
    status         TEXT      NOT NULL DEFAULT 'processing',
    lock_id        TEXT,
    locked_until   TIMESTAMP,
    completed_at   TIMESTAMP,
    CONSTRAINT uk_sys_event_inbox_group_event UNIQUE (consumer_group, event_id)
);
CREATE INDEX idx_sys_event_inbox_completed ON sys_event_inbox (completed_at);

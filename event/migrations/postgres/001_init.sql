-- Event bus tables (wire-runtime §2.4, §2.5). Times are UTC, written by the server's clock.

CREATE TABLE sys_event_outbox (
    id             varchar(36)  NOT NULL PRIMARY KEY,
    created_at     timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by     varchar(32)  NOT NULL DEFAULT 'system',
    event_id       varchar(64)  NOT NULL,
    event_type     varchar(128) NOT NULL,
    source         varchar(128) NOT NULL DEFAULT '',
    trace_id       varchar(64),
    span_id        varchar(64),
    correlation_id varchar(128),
    headers        jsonb,
    payload        jsonb        NOT NULL,
    status         varchar(16)  NOT NULL DEFAULT 'pending',
    retry_count    integer      NOT NULL DEFAULT 0,
    last_error     text,
    processed_at   timestamp,
    retry_after    timestamp,
    occurred_at    timestamp    NOT NULL,
    CONSTRAINT uk_sys_event_outbox_event_id UNIQUE (event_id)
);
CREATE INDEX idx_sys_event_outbox_status_retry ON sys_event_outbox (status, retry_after, created_at);
CREATE INDEX idx_sys_event_outbox_type_created ON sys_event_outbox (event_type, created_at);
CREATE INDEX idx_sys_event_outbox_status_processed ON sys_event_outbox (status, processed_at);

CREATE TABLE sys_event_inbox (
    id             varchar(36)  NOT NULL PRIMARY KEY,
    created_at     timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by     varchar(32)  NOT NULL DEFAULT 'system',
    event_id       varchar(64)  NOT NULL,
    consumer_group varchar(128) NOT NULL,
    status         varchar(16)  NOT NULL DEFAULT 'processing',
    lock_id        varchar(36),
    locked_until   timestamp,
    completed_at   timestamp,
    CONSTRAINT uk_sys_event_inbox_group_event UNIQUE (consumer_group, event_id)
);
CREATE INDEX idx_sys_event_inbox_completed ON sys_event_inbox (completed_at);

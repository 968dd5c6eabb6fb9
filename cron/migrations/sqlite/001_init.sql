-- Cron store tables (wire-runtime §1.2, the newest design). Instants of the schedule and its
-- runs are epoch milliseconds (INTEGER *_unix_ms); audit times are UTC text read back as TIMESTAMP.

CREATE TABLE crn_schedule (
    id                   TEXT  NOT NULL,
    created_at           TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    created_by           TEXT NOT NULL DEFAULT 'system',
    updated_at           TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    updated_by           TEXT NOT NULL DEFAULT 'system',
    name                 TEXT NOT NULL,
    job_name             TEXT NOT NULL,
    kind                 TEXT  NOT NULL,
    expr                 TEXT         NOT NULL,
    timezone             TEXT  NOT NULL,
    every_ms             INTEGER      NOT NULL DEFAULT 0,
    fire_at_unix_ms      INTEGER      NULL,
    starts_at_unix_ms    INTEGER      NULL,
    ends_at_unix_ms      INTEGER      NULL,
    anchor_at_unix_ms    INTEGER      NOT NULL,
    params               TEXT        NULL,
    misfire_policy       TEXT  NOT NULL DEFAULT 'fire_now',
    concurrency_policy   TEXT  NOT NULL DEFAULT 'forbid',
    recover              BOOLEAN      NOT NULL DEFAULT false,
    timeout_ms           INTEGER      NOT NULL DEFAULT 0,
    is_enabled           BOOLEAN      NOT NULL DEFAULT true,
    next_fire_at_unix_ms INTEGER      NULL,
    last_fire_at_unix_ms INTEGER      NULL,
    CONSTRAINT pk_crn_schedule PRIMARY KEY (id),
    CONSTRAINT uk_crn_schedule__name UNIQUE (name)
);
CREATE INDEX idx_crn_schedule__is_enabled_next_fire_at_unix_ms ON crn_schedule (is_enabled, next_fire_at_unix_ms);

CREATE TABLE crn_fire_request (
    id                   TEXT NOT NULL,
    schedule_id          TEXT NOT NULL,
    kind                 TEXT NOT NULL,
    scheduled_at_unix_ms INTEGER     NOT NULL,
    source_run_id        TEXT NULL,
    CONSTRAINT pk_crn_fire_request PRIMARY KEY (id),
    CONSTRAINT uk_crn_fire_request__source_run_id UNIQUE (source_run_id)
);
CREATE INDEX idx_crn_fire_request__schedule_id_scheduled_at ON crn_fire_request (schedule_id, scheduled_at_unix_ms, id);

CREATE TABLE crn_run (
    id                   TEXT  NOT NULL,
    created_at           TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    created_by           TEXT NOT NULL DEFAULT 'system',
    schedule_id          TEXT  NOT NULL,
    schedule_name        TEXT NOT NULL,
    job_name             TEXT NOT NULL,
    scheduled_at_unix_ms INTEGER      NOT NULL,
    claimed_at_unix_ms   INTEGER      NOT NULL,
    status               TEXT  NOT NULL,
    node_id              TEXT         NOT NULL,
    started_at_unix_ms   INTEGER      NULL,
    finished_at_unix_ms  INTEGER      NULL,
    heartbeat_at_unix_ms INTEGER      NULL,
    duration_ms          INTEGER      NOT NULL DEFAULT 0,
    error                TEXT         NOT NULL,
    missed_count         INTEGER     NOT NULL DEFAULT 0,
    CONSTRAINT pk_crn_run PRIMARY KEY (id)
);
CREATE INDEX idx_crn_run__schedule_id_scheduled_at ON crn_run (schedule_id, scheduled_at_unix_ms);
CREATE INDEX idx_crn_run__status_heartbeat_at ON crn_run (status, heartbeat_at_unix_ms);
CREATE INDEX idx_crn_run__schedule_id_status ON crn_run (schedule_id, status);
CREATE INDEX idx_crn_run__finished_at ON crn_run (finished_at_unix_ms);
CREATE INDEX idx_crn_run__claimed_at_id ON crn_run (claimed_at_unix_ms, id);

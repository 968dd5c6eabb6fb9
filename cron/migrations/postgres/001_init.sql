-- Cron store tables (wire-runtime §1.2, the newest design). Instants of the schedule and its
-- runs are epoch milliseconds (BIGINT *_unix_ms); audit times are UTC timestamps.

CREATE TABLE crn_schedule (
    id                   varchar(64)  NOT NULL,
    created_at           timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by           varchar(128) NOT NULL DEFAULT 'system',
    updated_at           timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_by           varchar(128) NOT NULL DEFAULT 'system',
    name                 varchar(128) NOT NULL,
    job_name             varchar(128) NOT NULL,
    kind                 varchar(16)  NOT NULL,
    expr                 text         NOT NULL,
    timezone             varchar(64)  NOT NULL,
    every_ms             bigint       NOT NULL DEFAULT 0,
    fire_at_unix_ms      bigint       NULL,
    starts_at_unix_ms    bigint       NULL,
    ends_at_unix_ms      bigint       NULL,
    anchor_at_unix_ms    bigint       NOT NULL,
    params               jsonb        NULL,
    misfire_policy       varchar(16)  NOT NULL DEFAULT 'fire_now',
    concurrency_policy   varchar(16)  NOT NULL DEFAULT 'forbid',
    recover              boolean      NOT NULL DEFAULT false,
    timeout_ms           bigint       NOT NULL DEFAULT 0,
    is_enabled           boolean      NOT NULL DEFAULT true,
    next_fire_at_unix_ms bigint       NULL,
    last_fire_at_unix_ms bigint       NULL,
    CONSTRAINT pk_crn_schedule PRIMARY KEY (id),
    CONSTRAINT uk_crn_schedule__name UNIQUE (name)
);
CREATE INDEX idx_crn_schedule__is_enabled_next_fire_at_unix_ms ON crn_schedule (is_enabled, next_fire_at_unix_ms);

CREATE TABLE crn_fire_request (
    id                   varchar(64) NOT NULL,
    schedule_id          varchar(64) NOT NULL,
    kind                 varchar(16) NOT NULL,
    scheduled_at_unix_ms bigint      NOT NULL,
    source_run_id        varchar(64) NULL,
    CONSTRAINT pk_crn_fire_request PRIMARY KEY (id),
    CONSTRAINT uk_crn_fire_request__source_run_id UNIQUE (source_run_id)
);
CREATE INDEX idx_crn_fire_request__schedule_id_scheduled_at ON crn_fire_request (schedule_id, scheduled_at_unix_ms, id);

CREATE TABLE crn_run (
    id                   varchar(64)  NOT NULL,
    created_at           timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by           varchar(128) NOT NULL DEFAULT 'system',
    schedule_id          varchar(64)  NOT NULL,
    schedule_name        varchar(128) NOT NULL,
    job_name             varchar(128) NOT NULL,
    scheduled_at_unix_ms bigint       NOT NULL,
    claimed_at_unix_ms   bigint       NOT NULL,
    status               varchar(16)  NOT NULL,
    node_id              text         NOT NULL,
    started_at_unix_ms   bigint       NULL,
    finished_at_unix_ms  bigint       NULL,
    heartbeat_at_unix_ms bigint       NULL,
    duration_ms          bigint       NOT NULL DEFAULT 0,
    error                text         NOT NULL,
    missed_count         integer      NOT NULL DEFAULT 0,
    CONSTRAINT pk_crn_run PRIMARY KEY (id)
);
CREATE INDEX idx_crn_run__schedule_id_scheduled_at ON crn_run (schedule_id, scheduled_at_unix_ms);
CREATE INDEX idx_crn_run__status_heartbeat_at ON crn_run (status, heartbeat_at_unix_ms);
CREATE INDEX idx_crn_run__schedule_id_status ON crn_run (schedule_id, status);
CREATE INDEX idx_crn_run__finished_at ON crn_run (finished_at_unix_ms);
CREATE INDEX idx_crn_run__claimed_at_id ON crn_run (claimed_at_unix_ms, id);

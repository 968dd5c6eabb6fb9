-- Cron store tables (wire-runtime §1.2, the newest design). Instants of the schedule and its
-- runs are epoch milliseconds (BIGINT *_unix_ms); audit times are UTC DATETIME(6).

CREATE TABLE crn_schedule (
    id                   VARCHAR(64)  NOT NULL,
    created_at           DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by           VARCHAR(128) NOT NULL DEFAULT 'system',
    updated_at           DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_by           VARCHAR(128) NOT NULL DEFAULT 'system',
    name                 VARCHAR(128) NOT NULL,
    job_name             VARCHAR(128) NOT NULL,
    kind                 VARCHAR(16)  NOT NULL,
    expr                 TEXT         NOT NULL,
    timezone             VARCHAR(64)  NOT NULL,
    every_ms             BIGINT       NOT NULL DEFAULT 0,
    fire_at_unix_ms      BIGINT       NULL,
    starts_at_unix_ms    BIGINT       NULL,
    ends_at_unix_ms      BIGINT       NULL,
    anchor_at_unix_ms    BIGINT       NOT NULL,
    params               JSON         NULL,
    misfire_policy       VARCHAR(16)  NOT NULL DEFAULT 'fire_now',
    concurrency_policy   VARCHAR(16)  NOT NULL DEFAULT 'forbid',
    recover              BOOLEAN      NOT NULL DEFAULT FALSE,
    timeout_ms           BIGINT       NOT NULL DEFAULT 0,
    is_enabled           BOOLEAN      NOT NULL DEFAULT TRUE,
    next_fire_at_unix_ms BIGINT       NULL,
    last_fire_at_unix_ms BIGINT       NULL,
    CONSTRAINT pk_crn_schedule PRIMARY KEY (id),
    UNIQUE KEY uk_crn_schedule__name (name),
    KEY idx_crn_schedule__is_enabled_next_fire_at_unix_ms (is_enabled, next_fire_at_unix_ms)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE crn_fire_request (
    id                   VARCHAR(64) NOT NULL,
    schedule_id          VARCHAR(64) NOT NULL,
    kind                 VARCHAR(16) NOT NULL,
    scheduled_at_unix_ms BIGINT      NOT NULL,
    source_run_id        VARCHAR(64) NULL,
    CONSTRAINT pk_crn_fire_request PRIMARY KEY (id),
    UNIQUE KEY uk_crn_fire_request__source_run_id (source_run_id),
    KEY idx_crn_fire_request__schedule_id_scheduled_at (schedule_id, scheduled_at_unix_ms, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE crn_run (
    id                   VARCHAR(64)  NOT NULL,
    created_at           DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by           VARCHAR(128) NOT NULL DEFAULT 'system',
    schedule_id          VARCHAR(64)  NOT NULL,
    schedule_name        VARCHAR(128) NOT NULL,
    job_name             VARCHAR(128) NOT NULL,
    scheduled_at_unix_ms BIGINT       NOT NULL,
    claimed_at_unix_ms   BIGINT       NOT NULL,
    status               VARCHAR(16)  NOT NULL,
    node_id              TEXT         NOT NULL,
    started_at_unix_ms   BIGINT       NULL,
    finished_at_unix_ms  BIGINT       NULL,
    heartbeat_at_unix_ms BIGINT       NULL,
    duration_ms          BIGINT       NOT NULL DEFAULT 0,
    error                TEXT         NOT NULL,
    missed_count         INT          NOT NULL DEFAULT 0,
    CONSTRAINT pk_crn_run PRIMARY KEY (id),
    KEY idx_crn_run__schedule_id_scheduled_at (schedule_id, scheduled_at_unix_ms),
    KEY idx_crn_run__status_heartbeat_at (status, heartbeat_at_unix_ms),
    KEY idx_crn_run__schedule_id_status (schedule_id, status),
    KEY idx_crn_run__finished_at (finished_at_unix_ms),
    KEY idx_crn_run__claimed_at_id (claimed_at_unix_ms, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

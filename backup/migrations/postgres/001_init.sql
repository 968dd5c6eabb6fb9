-- Backup module tables (issue #47): the archives written and the cluster-wide backup lease.
CREATE TABLE sys_backup (
    id           VARCHAR(64)   NOT NULL PRIMARY KEY,
    name         VARCHAR(255)  NOT NULL,
    destination  VARCHAR(16)   NOT NULL,
    location     VARCHAR(1024) NOT NULL,
    status       VARCHAR(16)   NOT NULL DEFAULT 'running',
    error        TEXT          NOT NULL DEFAULT '',
    size         BIGINT        NOT NULL DEFAULT 0,
    file_count   BIGINT        NOT NULL DEFAULT 0,
    db_included  BOOLEAN       NOT NULL DEFAULT FALSE,
    encrypted    BOOLEAN       NOT NULL DEFAULT FALSE,
    trigger_kind VARCHAR(16)   NOT NULL DEFAULT 'manual',
    created_by   VARCHAR(255)  NOT NULL DEFAULT 'system',
    node_id      VARCHAR(128)  NOT NULL DEFAULT '',
    started_at_unix_ms  BIGINT NOT NULL,
    finished_at_unix_ms BIGINT NOT NULL DEFAULT 0,
    download_token      VARCHAR(128) NOT NULL DEFAULT '',
    download_expires_unix_ms BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX idx_sys_backup_started ON sys_backup (started_at_unix_ms);

CREATE TABLE sys_backup_lease (
    name             VARCHAR(64)  NOT NULL PRIMARY KEY,
    holder           VARCHAR(128) NOT NULL DEFAULT '',
    expires_unix_ms  BIGINT       NOT NULL DEFAULT 0
);
INSERT INTO sys_backup_lease (name, holder, expires_unix_ms) VALUES ('backup', '', 0);

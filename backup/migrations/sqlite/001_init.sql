-- Backup module tables (issue #47): the archives written and the cluster-wide backup lease.
CREATE TABLE sys_backup (
    id           TEXT    NOT NULL PRIMARY KEY,
    name         TEXT    NOT NULL,
    destination  TEXT    NOT NULL,
    location     TEXT    NOT NULL,
    status       TEXT    NOT NULL DEFAULT 'running',
    error        TEXT    NOT NULL DEFAULT '',
    size         INTEGER NOT NULL DEFAULT 0,
    file_count   INTEGER NOT NULL DEFAULT 0,
    db_included  BOOLEAN NOT NULL DEFAULT FALSE,
    encrypted    BOOLEAN NOT NULL DEFAULT FALSE,
    trigger_kind TEXT    NOT NULL DEFAULT 'manual',
    created_by   TEXT    NOT NULL DEFAULT 'system',
    node_id      TEXT    NOT NULL DEFAULT '',
    started_at_unix_ms  INTEGER NOT NULL,
    finished_at_unix_ms INTEGER NOT NULL DEFAULT 0,
    download_token      TEXT    NOT NULL DEFAULT '',
    download_expires_unix_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_sys_backup_started ON sys_backup (started_at_unix_ms);

CREATE TABLE sys_backup_lease (
    name             TEXT    NOT NULL PRIMARY KEY,
    holder           TEXT    NOT NULL DEFAULT '',
    expires_unix_ms  INTEGER NOT NULL DEFAULT 0
);
INSERT INTO sys_backup_lease (name, holder, expires_unix_ms) VALUES ('backup', '', 0);

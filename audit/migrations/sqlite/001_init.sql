-- The audit trail (issue #47): one row per audited /api call or security event, written by
-- the node that saw it (node_id). Instants are epoch milliseconds.

CREATE TABLE sys_audit_record (
    id           TEXT    NOT NULL,
    at_unix_ms   INTEGER NOT NULL,
    node_id      TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    request_id   TEXT    NOT NULL DEFAULT '',
    user_id      TEXT    NOT NULL DEFAULT '',
    user_name    TEXT    NOT NULL DEFAULT '',
    resource     TEXT    NOT NULL,
    action       TEXT    NOT NULL,
    version      TEXT    NOT NULL DEFAULT '',
    client_ip    TEXT    NOT NULL DEFAULT '',
    user_agent   TEXT    NOT NULL DEFAULT '',
    code         INTEGER NOT NULL DEFAULT 0,
    status       INTEGER NOT NULL DEFAULT 0,
    ok           BOOLEAN NOT NULL,
    duration_ms  INTEGER NOT NULL DEFAULT 0,
    detail       TEXT    NOT NULL,
    CONSTRAINT pk_sys_audit_record PRIMARY KEY (id)
);
CREATE INDEX idx_sys_audit_record__at ON sys_audit_record (at_unix_ms);
CREATE INDEX idx_sys_audit_record__user_id_at ON sys_audit_record (user_id, at_unix_ms);
CREATE INDEX idx_sys_audit_record__user_name_at ON sys_audit_record (user_name, at_unix_ms);
CREATE INDEX idx_sys_audit_record__resource_action_at ON sys_audit_record (resource, action, at_unix_ms);
CREATE INDEX idx_sys_audit_record__ok_at ON sys_audit_record (ok, at_unix_ms);
CREATE INDEX idx_sys_audit_record__code_at ON sys_audit_record (code, at_unix_ms);

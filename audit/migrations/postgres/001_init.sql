-- The audit trail (issue #47): one row per audited /api call or security event, written by
-- the node that saw it (node_id). Instants are epoch milliseconds.

CREATE TABLE sys_audit_record (
    id           varchar(64)  NOT NULL,
    at_unix_ms   bigint       NOT NULL,
    node_id      varchar(128) NOT NULL,
    kind         varchar(16)  NOT NULL,
    request_id   varchar(128) NOT NULL DEFAULT '',
    user_id      varchar(255) NOT NULL DEFAULT '',
    user_name    varchar(255) NOT NULL DEFAULT '',
    resource     varchar(255) NOT NULL,
    action       varchar(128) NOT NULL,
    version      varchar(32)  NOT NULL DEFAULT '',
    client_ip    varchar(64)  NOT NULL DEFAULT '',
    user_agent   text         NOT NULL DEFAULT '',
    code         integer      NOT NULL DEFAULT 0,
    status       integer      NOT NULL DEFAULT 0,
    ok           boolean      NOT NULL,
    duration_ms  bigint       NOT NULL DEFAULT 0,
    detail       text         NOT NULL,
    CONSTRAINT pk_sys_audit_record PRIMARY KEY (id)
);
CREATE INDEX idx_sys_audit_record__at ON sys_audit_record (at_unix_ms);
CREATE INDEX idx_sys_audit_record__user_id_at ON sys_audit_record (user_id, at_unix_ms);
CREATE INDEX idx_sys_audit_record__user_name_at ON sys_audit_record (user_name, at_unix_ms);
CREATE INDEX idx_sys_audit_record__resource_action_at ON sys_audit_record (resource, action, at_unix_ms);
CREATE INDEX idx_sys_audit_record__ok_at ON sys_audit_record (ok, at_unix_ms);
CREATE INDEX idx_sys_audit_record__code_at ON sys_audit_record (code, at_unix_ms);

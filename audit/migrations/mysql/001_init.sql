-- The audit trail (issue #47): one row per audited /api call or security event, written by
-- the node that saw it (node_id). Instants are epoch milliseconds.

CREATE TABLE sys_audit_record (
    id           VARCHAR(64)  NOT NULL,
    at_unix_ms   BIGINT       NOT NULL,
    node_id      VARCHAR(128) NOT NULL,
    kind         VARCHAR(16)  NOT NULL,
    request_id   VARCHAR(128) NOT NULL DEFAULT '',
    user_id      VARCHAR(191) NOT NULL DEFAULT '',
    user_name    VARCHAR(191) NOT NULL DEFAULT '',
    resource     VARCHAR(191) NOT NULL,
    action       VARCHAR(128) NOT NULL,
    version      VARCHAR(32)  NOT NULL DEFAULT '',
    client_ip    VARCHAR(64)  NOT NULL DEFAULT '',
    user_agent   TEXT         NOT NULL,
    code         INT          NOT NULL DEFAULT 0,
    status       INT          NOT NULL DEFAULT 0,
    ok           BOOLEAN      NOT NULL,
    duration_ms  BIGINT       NOT NULL DEFAULT 0,
    detail       MEDIUMTEXT   NOT NULL,
    CONSTRAINT pk_sys_audit_record PRIMARY KEY (id),
    KEY idx_sys_audit_record__at (at_unix_ms),
    KEY idx_sys_audit_record__user_id_at (user_id, at_unix_ms),
    KEY idx_sys_audit_record__user_name_at (user_name, at_unix_ms),
    KEY idx_sys_audit_record__resource_action_at (resource, action, at_unix_ms),
    KEY idx_sys_audit_record__ok_at (ok, at_unix_ms),
    KEY idx_sys_audit_record__code_at (code, at_unix_ms)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- Opaque-token sessions (token_type opaque_token): keyed by hex(SHA-256(token)), never the token.
CREATE TABLE sys_security_session (
    id             varchar(64)  PRIMARY KEY,
    principal_id   varchar(255) NOT NULL,
    principal      text         NOT NULL,
    client_ip      varchar(64)  NOT NULL DEFAULT '',
    created_at     datetime(6)  NOT NULL,
    last_seen_at   datetime(6)  NOT NULL,
    expires_at     datetime(6)  NOT NULL,
    max_expires_at datetime(6)  NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX ix_sys_security_session_principal ON sys_security_session (principal_id, created_at);
CREATE INDEX ix_sys_security_session_expires ON sys_security_session (expires_at);

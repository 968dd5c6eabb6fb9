-- Opaque-token sessions (token_type opaque_token): keyed by hex(SHA-256(token)), never the token.
CREATE TABLE sys_security_session (
    id             varchar(64)  PRIMARY KEY,
    principal_id   varchar(255) NOT NULL,
    principal      text         NOT NULL,
    client_ip      varchar(64)  NOT NULL DEFAULT '',
    created_at     timestamptz  NOT NULL,
    last_seen_at   timestamptz  NOT NULL,
    expires_at     timestamptz  NOT NULL,
    max_expires_at timestamptz  NOT NULL
);
CREATE INDEX ix_sys_security_session_principal ON sys_security_session (principal_id, created_at);
CREATE INDEX ix_sys_security_session_expires ON sys_security_session (expires_at);

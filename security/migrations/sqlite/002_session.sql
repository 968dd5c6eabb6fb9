-- Opaque-token sessions (token_type opaque_token): keyed by hex(SHA-256(token)), never the token.
CREATE TABLE sys_security_session (
    id             text      PRIMARY KEY,
    principal_id   text      NOT NULL,
    principal      text      NOT NULL,
    client_ip      text      NOT NULL DEFAULT '',
    created_at     timestamp NOT NULL,
    last_seen_at   timestamp NOT NULL,
    expires_at     timestamp NOT NULL,
    max_expires_at timestamp NOT NULL
);
CREATE INDEX ix_sys_security_session_principal ON sys_security_session (principal_id, created_at);
CREATE INDEX ix_sys_security_session_expires ON sys_security_session (expires_at);

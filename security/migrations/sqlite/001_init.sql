-- Built-in user store, password history, refresh-token families and used TOTP steps.
CREATE TABLE sys_security_user (
    id                  text  PRIMARY KEY,
    username            text NOT NULL,
    display_name        text NOT NULL DEFAULT '',
    password_hash       text NOT NULL,
    roles               text NOT NULL DEFAULT '[]',
    disabled            integer      NOT NULL DEFAULT 0,
    totp_secret         text NOT NULL DEFAULT '',
    totp_pending_secret text NOT NULL DEFAULT '',
    password_changed_at timestamp     NOT NULL,
    tokens_valid_after  timestamp     NOT NULL,
    created_at          timestamp     NOT NULL,
    updated_at          timestamp     NOT NULL
);
CREATE UNIQUE INDEX uq_sys_security_user_username ON sys_security_user (username);

CREATE TABLE sys_security_password_history (
    id            text  PRIMARY KEY,
    user_id       text  NOT NULL,
    password_hash text NOT NULL,
    created_at    timestamp     NOT NULL
);
CREATE INDEX ix_sys_security_password_history_user ON sys_security_password_history (user_id, created_at);

CREATE TABLE sys_security_token_family (
    id            text  PRIMARY KEY,
    principal_id  text NOT NULL,
    current_jti   text  NOT NULL,
    principal     text         NOT NULL,
    created_at    timestamp     NOT NULL,
    refreshed_at  timestamp     NOT NULL,
    expires_at    timestamp     NOT NULL,
    revoked_at    timestamp     NULL,
    revoke_reason text  NOT NULL DEFAULT ''
);
CREATE INDEX ix_sys_security_token_family_principal ON sys_security_token_family (principal_id);
CREATE INDEX ix_sys_security_token_family_expires ON sys_security_token_family (expires_at);

CREATE TABLE sys_security_totp_step (
    principal_id text PRIMARY KEY,
    last_step    integer      NOT NULL,
    updated_at   timestamp     NOT NULL
);

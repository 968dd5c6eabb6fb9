-- Built-in user store, password history, refresh-token families and used TOTP steps.
CREATE TABLE sys_security_user (
    id                  varchar(36)  PRIMARY KEY,
    username            varchar(128) NOT NULL,
    display_name        varchar(255) NOT NULL DEFAULT '',
    password_hash       varchar(255) NOT NULL,
    roles               varchar(2048) NOT NULL DEFAULT '[]',
    disabled            tinyint(1)   NOT NULL DEFAULT 0,
    totp_secret         varchar(128) NOT NULL DEFAULT '',
    totp_pending_secret varchar(128) NOT NULL DEFAULT '',
    password_changed_at datetime(6)   NOT NULL,
    tokens_valid_after  datetime(6)   NOT NULL,
    created_at          datetime(6)   NOT NULL,
    updated_at          datetime(6)   NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE UNIQUE INDEX uq_sys_security_user_username ON sys_security_user (username);

CREATE TABLE sys_security_password_history (
    id            varchar(36)  PRIMARY KEY,
    user_id       varchar(36)  NOT NULL,
    password_hash varchar(255) NOT NULL,
    created_at    datetime(6)   NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX ix_sys_security_password_history_user ON sys_security_password_history (user_id, created_at);

CREATE TABLE sys_security_token_family (
    id            varchar(36)  PRIMARY KEY,
    principal_id  varchar(255) NOT NULL,
    current_jti   varchar(36)  NOT NULL,
    principal     text         NOT NULL,
    created_at    datetime(6)   NOT NULL,
    refreshed_at  datetime(6)   NOT NULL,
    expires_at    datetime(6)   NOT NULL,
    revoked_at    datetime(6)   NULL,
    revoke_reason varchar(32)  NOT NULL DEFAULT ''
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX ix_sys_security_token_family_principal ON sys_security_token_family (principal_id);
CREATE INDEX ix_sys_security_token_family_expires ON sys_security_token_family (expires_at);

CREATE TABLE sys_security_totp_step (
    principal_id varchar(255) PRIMARY KEY,
    last_step    bigint       NOT NULL,
    updated_at   datetime(6)   NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

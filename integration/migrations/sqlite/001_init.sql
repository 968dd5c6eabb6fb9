-- Integration module tables (wire-integration §3). Times are UTC text written by the server's clock;
-- ids are UUIDv7 strings. Deleting a contract or system still referenced is refused by the
-- foreign keys (2003); itg_route.contract_id has no foreign key ('' is the wildcard).

CREATE TABLE itg_contract (
    id            VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at    TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    created_by    VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at    TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    updated_by    VARCHAR(64)  NOT NULL DEFAULT 'system',
    code          VARCHAR(128) NOT NULL,
    name          VARCHAR(128) NOT NULL,
    description   VARCHAR(512) NULL,
    labels        TEXT         NULL,
    input_schema  TEXT         NULL,
    output_schema TEXT         NULL,
    is_enabled    BOOLEAN      NOT NULL DEFAULT TRUE,
    CONSTRAINT uk_itg_contract__code UNIQUE (code)
);

CREATE TABLE itg_system (
    id                VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at        TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    created_by        VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at        TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    updated_by        VARCHAR(64)  NOT NULL DEFAULT 'system',
    code              VARCHAR(128) NOT NULL,
    name              VARCHAR(128) NOT NULL,
    base_url          VARCHAR(512) NOT NULL DEFAULT '',
    outbound_auth     TEXT         NULL,
    outbound_envelope TEXT         NULL,
    inbound_auth      TEXT         NULL,
    data_source       TEXT         NULL,
    params            TEXT         NULL,
    timeout_ms        INTEGER      NOT NULL DEFAULT 0,
    retry             TEXT         NULL,
    is_enabled        BOOLEAN      NOT NULL DEFAULT TRUE,
    CONSTRAINT uk_itg_system__code UNIQUE (code)
);

CREATE TABLE itg_adapter (
    id          VARCHAR(64) NOT NULL PRIMARY KEY,
    created_at  TIMESTAMP   NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    created_by  VARCHAR(64) NOT NULL DEFAULT 'system',
    updated_at  TIMESTAMP   NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    updated_by  VARCHAR(64) NOT NULL DEFAULT 'system',
    system_id   VARCHAR(64) NOT NULL REFERENCES itg_system (id) ON DELETE RESTRICT,
    contract_id VARCHAR(64) NOT NULL REFERENCES itg_contract (id) ON DELETE RESTRICT,
    direction   VARCHAR(16) NOT NULL DEFAULT 'outbound',
    script      TEXT        NOT NULL,
    timeout_ms  INTEGER     NOT NULL DEFAULT 0,
    is_enabled  BOOLEAN     NOT NULL DEFAULT TRUE,
    CONSTRAINT uk_itg_adapter__system_contract_direction UNIQUE (system_id, contract_id, direction)
);
CREATE INDEX idx_itg_adapter__contract ON itg_adapter (contract_id);

CREATE TABLE itg_route (
    id          VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at  TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    created_by  VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at  TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    updated_by  VARCHAR(64)  NOT NULL DEFAULT 'system',
    route_key   VARCHAR(128) NOT NULL DEFAULT '',
    contract_id VARCHAR(64)  NOT NULL DEFAULT '',
    system_id   VARCHAR(64)  NOT NULL REFERENCES itg_system (id) ON DELETE RESTRICT,
    is_enabled  BOOLEAN      NOT NULL DEFAULT TRUE,
    CONSTRAINT uk_itg_route__key_contract UNIQUE (route_key, contract_id)
);
CREATE INDEX idx_itg_route__system ON itg_route (system_id);

CREATE TABLE itg_code_map (
    id                 VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at         TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    created_by         VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at         TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    updated_by         VARCHAR(64)  NOT NULL DEFAULT 'system',
    system_id          VARCHAR(64)  NOT NULL REFERENCES itg_system (id) ON DELETE RESTRICT,
    code_set           VARCHAR(128) NOT NULL,
    name               VARCHAR(128) NOT NULL,
    entries            TEXT         NULL,
    on_unmapped        VARCHAR(16)  NOT NULL DEFAULT 'reject',
    fallback_canonical TEXT         NULL,
    fallback_external  TEXT         NULL,
    is_enabled         BOOLEAN      NOT NULL DEFAULT TRUE,
    CONSTRAINT uk_itg_code_map__system_code_set UNIQUE (system_id, code_set)
);

CREATE TABLE itg_invocation_log (
    id            VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at    TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    created_by    VARCHAR(64)  NOT NULL DEFAULT 'system',
    system_code   VARCHAR(128) NOT NULL,
    contract_code VARCHAR(128) NOT NULL,
    direction     VARCHAR(16)  NOT NULL DEFAULT 'outbound',
    failure_kind  VARCHAR(16)  NOT NULL DEFAULT '',
    duration_ms   BIGINT       NOT NULL DEFAULT 0,
    input         TEXT         NULL,
    output        TEXT         NULL,
    http_trace    TEXT         NULL,
    error         TEXT         NULL,
    request_id    VARCHAR(128) NOT NULL DEFAULT ''
);
CREATE INDEX idx_itg_invocation_log__created_at ON itg_invocation_log (created_at);
CREATE INDEX idx_itg_invocation_log__system_contract ON itg_invocation_log (system_code, contract_code);

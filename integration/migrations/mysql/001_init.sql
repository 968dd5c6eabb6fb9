-- Integration module tables (wire-integration §3). Times are UTC written by the server's clock;
-- ids are UUIDv7 strings. Deleting a contract or system still referenced is refused by the
-- foreign keys (2003); itg_route.contract_id has no foreign key ('' is the wildcard).

CREATE TABLE itg_contract (
    id            VARCHAR(64)  NOT NULL,
    created_at    DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by    VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at    DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_by    VARCHAR(64)  NOT NULL DEFAULT 'system',
    code          VARCHAR(128) NOT NULL,
    name          VARCHAR(128) NOT NULL,
    description   VARCHAR(512) NULL,
    labels        JSON         NULL,
    input_schema  JSON         NULL,
    output_schema JSON         NULL,
    is_enabled    BOOLEAN      NOT NULL DEFAULT TRUE,
    PRIMARY KEY (id),
    UNIQUE KEY uk_itg_contract__code (code)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE itg_system (
    id                VARCHAR(64)  NOT NULL,
    created_at        DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by        VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at        DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_by        VARCHAR(64)  NOT NULL DEFAULT 'system',
    code              VARCHAR(128) NOT NULL,
    name              VARCHAR(128) NOT NULL,
    base_url          VARCHAR(512) NOT NULL DEFAULT '',
    outbound_auth     JSON         NULL,
    outbound_envelope JSON         NULL,
    inbound_auth      JSON         NULL,
    data_source       JSON         NULL,
    params            JSON         NULL,
    timeout_ms        INT          NOT NULL DEFAULT 0,
    retry             JSON         NULL,
    is_enabled        BOOLEAN      NOT NULL DEFAULT TRUE,
    PRIMARY KEY (id),
    UNIQUE KEY uk_itg_system__code (code)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE itg_adapter (
    id          VARCHAR(64) NOT NULL,
    created_at  DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by  VARCHAR(64) NOT NULL DEFAULT 'system',
    updated_at  DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_by  VARCHAR(64) NOT NULL DEFAULT 'system',
    system_id   VARCHAR(64) NOT NULL,
    contract_id VARCHAR(64) NOT NULL,
    direction   VARCHAR(16) NOT NULL DEFAULT 'outbound',
    script      LONGTEXT    NOT NULL,
    timeout_ms  INT         NOT NULL DEFAULT 0,
    is_enabled  BOOLEAN     NOT NULL DEFAULT TRUE,
    PRIMARY KEY (id),
    UNIQUE KEY uk_itg_adapter__system_contract_direction (system_id, contract_id, direction),
    KEY idx_itg_adapter__contract (contract_id),
    CONSTRAINT fk_itg_adapter__system FOREIGN KEY (system_id) REFERENCES itg_system (id) ON DELETE RESTRICT,
    CONSTRAINT fk_itg_adapter__contract FOREIGN KEY (contract_id) REFERENCES itg_contract (id) ON DELETE RESTRICT
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE itg_route (
    id          VARCHAR(64)  NOT NULL,
    created_at  DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by  VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at  DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_by  VARCHAR(64)  NOT NULL DEFAULT 'system',
    route_key   VARCHAR(128) NOT NULL DEFAULT '',
    contract_id VARCHAR(64)  NOT NULL DEFAULT '',
    system_id   VARCHAR(64)  NOT NULL,
    is_enabled  BOOLEAN      NOT NULL DEFAULT TRUE,
    PRIMARY KEY (id),
    UNIQUE KEY uk_itg_route__key_contract (route_key, contract_id),
    KEY idx_itg_route__system (system_id),
    CONSTRAINT fk_itg_route__system FOREIGN KEY (system_id) REFERENCES itg_system (id) ON DELETE RESTRICT
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE itg_code_map (
    id                 VARCHAR(64)  NOT NULL,
    created_at         DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by         VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at         DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_by         VARCHAR(64)  NOT NULL DEFAULT 'system',
    system_id          VARCHAR(64)  NOT NULL,
    code_set           VARCHAR(128) NOT NULL,
    name               VARCHAR(128) NOT NULL,
    entries            JSON         NULL,
    on_unmapped        VARCHAR(16)  NOT NULL DEFAULT 'reject',
    fallback_canonical JSON         NULL,
    fallback_external  JSON         NULL,
    is_enabled         BOOLEAN      NOT NULL DEFAULT TRUE,
    PRIMARY KEY (id),
    UNIQUE KEY uk_itg_code_map__system_code_set (system_id, code_set),
    CONSTRAINT fk_itg_code_map__system FOREIGN KEY (system_id) REFERENCES itg_system (id) ON DELETE RESTRICT
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE itg_invocation_log (
    id            VARCHAR(64)  NOT NULL,
    created_at    DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by    VARCHAR(64)  NOT NULL DEFAULT 'system',
    system_code   VARCHAR(128) NOT NULL,
    contract_code VARCHAR(128) NOT NULL,
    direction     VARCHAR(16)  NOT NULL DEFAULT 'outbound',
    failure_kind  VARCHAR(16)  NOT NULL DEFAULT '',
    duration_ms   BIGINT       NOT NULL DEFAULT 0,
    input         JSON         NULL,
    output        JSON         NULL,
    http_trace    JSON         NULL,
    error         LONGTEXT     NULL,
    request_id    VARCHAR(128) NOT NULL DEFAULT '',
    PRIMARY KEY (id),
    KEY idx_itg_invocation_log__created_at (created_at),
    KEY idx_itg_invocation_log__system_contract (system_code, contract_code)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

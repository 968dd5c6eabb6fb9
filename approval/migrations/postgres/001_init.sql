-- Approval module tables (wire-approval §3): the 17 apv_* tables. Times are UTC written by the
-- server's clock; ids are UUIDv7 strings (VARCHAR(64): the original's 32-character columns do not
-- hold them). Foreign keys follow the original's DDL (RESTRICT where history must survive,
-- CASCADE for rows owned by their parent).

CREATE TABLE apv_flow_category (
    id          VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at  timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by  VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at  timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_by  VARCHAR(64)  NOT NULL DEFAULT 'system',
    tenant_id   VARCHAR(64)  NOT NULL,
    code        VARCHAR(64)  NOT NULL,
    name        VARCHAR(128) NOT NULL,
    icon        VARCHAR(128) NULL,
    parent_id   VARCHAR(64)  NULL,
    sort_order  INTEGER      NOT NULL DEFAULT 0,
    is_active   BOOLEAN      NOT NULL DEFAULT TRUE,
    remark      VARCHAR(256) NULL,
    CONSTRAINT uk_apv_flow_category__tenant_code UNIQUE (tenant_id, code),
    CONSTRAINT fk_apv_flow_category__parent FOREIGN KEY (parent_id) REFERENCES apv_flow_category (id) ON DELETE RESTRICT
);
CREATE INDEX idx_apv_flow_category__parent ON apv_flow_category (parent_id);

CREATE TABLE apv_flow (
    id                        VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at                timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by                VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at                timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_by                VARCHAR(64)  NOT NULL DEFAULT 'system',
    tenant_id                 VARCHAR(64)  NOT NULL,
    category_id               VARCHAR(64)  NOT NULL,
    code                      VARCHAR(64)  NOT NULL,
    name                      VARCHAR(128) NOT NULL,
    icon                      VARCHAR(128) NULL,
    description               VARCHAR(512) NULL,
    labels                    jsonb        NULL,
    binding_mode              VARCHAR(16)  NOT NULL DEFAULT 'standalone',
    business_binding          jsonb        NULL,
    admin_user_ids            jsonb        NOT NULL DEFAULT '[]',
    is_all_initiation_allowed BOOLEAN      NOT NULL DEFAULT TRUE,
    instance_title_template   VARCHAR(256) NOT NULL DEFAULT '{{.flowName}}-{{.instanceNo}}',
    is_active                 BOOLEAN      NOT NULL DEFAULT FALSE,
    current_version           INTEGER      NOT NULL DEFAULT 0,
    CONSTRAINT uk_apv_flow__tenant_code UNIQUE (tenant_id, code),
    CONSTRAINT fk_apv_flow__category FOREIGN KEY (category_id) REFERENCES apv_flow_category (id) ON DELETE RESTRICT
);
CREATE INDEX idx_apv_flow__category ON apv_flow (category_id);

CREATE TABLE apv_flow_initiator (
    id      VARCHAR(64) NOT NULL PRIMARY KEY,
    flow_id VARCHAR(64) NOT NULL,
    kind    VARCHAR(16) NOT NULL,
    ids     jsonb       NOT NULL DEFAULT '[]',
    CONSTRAINT fk_apv_flow_initiator__flow FOREIGN KEY (flow_id) REFERENCES apv_flow (id) ON DELETE CASCADE
);
CREATE INDEX idx_apv_flow_initiator__flow ON apv_flow_initiator (flow_id);

CREATE TABLE apv_flow_version (
    id               VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at       timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by       VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at       timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_by       VARCHAR(64)  NOT NULL DEFAULT 'system',
    flow_id          VARCHAR(64)  NOT NULL,
    version          INTEGER      NOT NULL,
    status           VARCHAR(16)  NOT NULL DEFAULT 'draft',
    description      VARCHAR(256) NULL,
    storage_mode     VARCHAR(8)   NOT NULL DEFAULT 'json',
    flow_schema      jsonb        NULL,
    form_schema      jsonb        NULL,
    form_fields      jsonb        NULL,
    published_at     timestamp    NULL,
    published_by     VARCHAR(64)  NULL,
    business_binding jsonb        NULL,
    CONSTRAINT uk_apv_flow_version__flow_version UNIQUE (flow_id, version),
    CONSTRAINT fk_apv_flow_version__flow FOREIGN KEY (flow_id) REFERENCES apv_flow (id) ON DELETE RESTRICT
);
-- At most one published version per flow.
CREATE UNIQUE INDEX uk_apv_flow_version__published ON apv_flow_version (flow_id) WHERE status = 'published';

CREATE TABLE apv_flow_node (
    id                          VARCHAR(64)   NOT NULL PRIMARY KEY,
    created_at                  timestamp     NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by                  VARCHAR(64)   NOT NULL DEFAULT 'system',
    updated_at                  timestamp     NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_by                  VARCHAR(64)   NOT NULL DEFAULT 'system',
    flow_version_id             VARCHAR(64)   NOT NULL,
    key                         VARCHAR(64)   NOT NULL,
    kind                        VARCHAR(16)   NOT NULL,
    name                        VARCHAR(128)  NOT NULL,
    description                 VARCHAR(512)  NULL,
    execution_type              VARCHAR(16)   NOT NULL DEFAULT 'manual',
    approval_method             VARCHAR(16)   NOT NULL DEFAULT 'parallel',
    pass_rule                   VARCHAR(16)   NOT NULL DEFAULT 'all',
    pass_ratio                  NUMERIC(5, 2) NOT NULL DEFAULT 100.00,
    empty_assignee_action       VARCHAR(32)   NOT NULL DEFAULT 'auto_pass',
    fallback_user_ids           jsonb         NOT NULL DEFAULT '[]',
    admin_user_ids              jsonb         NOT NULL DEFAULT '[]',
    same_applicant_action       VARCHAR(32)   NOT NULL DEFAULT 'self_approve',
    is_rollback_allowed         BOOLEAN       NOT NULL DEFAULT TRUE,
    rollback_type               VARCHAR(16)   NOT NULL DEFAULT 'previous',
    rollback_data_strategy      VARCHAR(16)   NULL,
    rollback_target_keys        jsonb         NULL,
    is_add_assignee_allowed     BOOLEAN       NOT NULL DEFAULT TRUE,
    add_assignee_types          jsonb         NOT NULL DEFAULT '["before","after","parallel"]',
    is_remove_assignee_allowed  BOOLEAN       NOT NULL DEFAULT TRUE,
    field_permissions           jsonb         NOT NULL DEFAULT '{}',
    is_manual_cc_allowed        BOOLEAN       NOT NULL DEFAULT TRUE,
    is_transfer_allowed         BOOLEAN       NOT NULL DEFAULT TRUE,
    is_opinion_required         BOOLEAN       NOT NULL DEFAULT FALSE,
    timeout_hours               INTEGER       NOT NULL DEFAULT 0,
    timeout_action              VARCHAR(16)   NOT NULL DEFAULT 'none',
    timeout_notify_before_hours INTEGER       NOT NULL DEFAULT 0,
    urge_cooldown_minutes       INTEGER       NOT NULL DEFAULT 0,
    consecutive_approver_action VARCHAR(32)   NOT NULL DEFAULT 'none',
    is_read_confirm_required    BOOLEAN       NOT NULL DEFAULT FALSE,
    branches                    jsonb         NULL,
    CONSTRAINT uk_apv_flow_node__version_key UNIQUE (flow_version_id, key),
    CONSTRAINT ck_apv_flow_node__pass_ratio CHECK (pass_ratio >= 0 AND pass_ratio <= 100),
    CONSTRAINT ck_apv_flow_node__timeout_hours CHECK (timeout_hours >= 0),
    CONSTRAINT ck_apv_flow_node__notify_before CHECK (timeout_notify_before_hours >= 0),
    CONSTRAINT ck_apv_flow_node__urge_cooldown CHECK (urge_cooldown_minutes >= 0),
    CONSTRAINT fk_apv_flow_node__version FOREIGN KEY (flow_version_id) REFERENCES apv_flow_version (id) ON DELETE CASCADE
);

CREATE TABLE apv_flow_node_assignee (
    id         VARCHAR(64) NOT NULL PRIMARY KEY,
    node_id    VARCHAR(64) NOT NULL,
    kind       VARCHAR(16) NOT NULL,
    ids        jsonb       NOT NULL DEFAULT '[]',
    form_field VARCHAR(64) NULL,
    sort_order INTEGER     NOT NULL DEFAULT 0,
    CONSTRAINT fk_apv_flow_node_assignee__node FOREIGN KEY (node_id) REFERENCES apv_flow_node (id) ON DELETE CASCADE
);
CREATE INDEX idx_apv_flow_node_assignee__node ON apv_flow_node_assignee (node_id);

CREATE TABLE apv_flow_node_cc (
    id         VARCHAR(64) NOT NULL PRIMARY KEY,
    node_id    VARCHAR(64) NOT NULL,
    kind       VARCHAR(16) NOT NULL,
    ids        jsonb       NOT NULL DEFAULT '[]',
    form_field VARCHAR(64) NULL,
    timing     VARCHAR(16) NOT NULL DEFAULT 'always',
    CONSTRAINT fk_apv_flow_node_cc__node FOREIGN KEY (node_id) REFERENCES apv_flow_node (id) ON DELETE CASCADE
);
CREATE INDEX idx_apv_flow_node_cc__node ON apv_flow_node_cc (node_id);

CREATE TABLE apv_flow_edge (
    id              VARCHAR(64) NOT NULL PRIMARY KEY,
    flow_version_id VARCHAR(64) NOT NULL,
    key             VARCHAR(64) NULL,
    source_node_id  VARCHAR(64) NOT NULL,
    target_node_id  VARCHAR(64) NOT NULL,
    source_node_key VARCHAR(64) NOT NULL,
    target_node_key VARCHAR(64) NOT NULL,
    source_handle   VARCHAR(64) NULL,
    CONSTRAINT fk_apv_flow_edge__version FOREIGN KEY (flow_version_id) REFERENCES apv_flow_version (id) ON DELETE CASCADE,
    CONSTRAINT fk_apv_flow_edge__source FOREIGN KEY (source_node_id) REFERENCES apv_flow_node (id) ON DELETE CASCADE,
    CONSTRAINT fk_apv_flow_edge__target FOREIGN KEY (target_node_id) REFERENCES apv_flow_node (id) ON DELETE CASCADE
);
CREATE INDEX idx_apv_flow_edge__version ON apv_flow_edge (flow_version_id);
CREATE INDEX idx_apv_flow_edge__source ON apv_flow_edge (source_node_id);
CREATE INDEX idx_apv_flow_edge__target ON apv_flow_edge (target_node_id);

CREATE TABLE apv_instance (
    id                        VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at                timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by                VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at                timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_by                VARCHAR(64)  NOT NULL DEFAULT 'system',
    tenant_id                 VARCHAR(64)  NOT NULL,
    flow_id                   VARCHAR(64)  NOT NULL,
    flow_code                 VARCHAR(64)  NOT NULL,
    flow_version_id           VARCHAR(64)  NOT NULL,
    title                     VARCHAR(256) NOT NULL,
    instance_no               VARCHAR(64)  NOT NULL,
    applicant_id              VARCHAR(64)  NOT NULL,
    applicant_name            VARCHAR(128) NOT NULL DEFAULT '',
    applicant_department_id   VARCHAR(64)  NULL,
    applicant_department_name VARCHAR(128) NULL,
    status                    VARCHAR(16)  NOT NULL DEFAULT 'running',
    current_node_id           VARCHAR(64)  NULL,
    finished_at               timestamp    NULL,
    business_ref              VARCHAR(512) NULL,
    form_data                 jsonb        NULL,
    globals                   jsonb        NULL,
    business_projection_id    VARCHAR(64)  NULL,
    CONSTRAINT uk_apv_instance__instance_no UNIQUE (instance_no),
    CONSTRAINT fk_apv_instance__flow FOREIGN KEY (flow_id) REFERENCES apv_flow (id) ON DELETE RESTRICT,
    CONSTRAINT fk_apv_instance__version FOREIGN KEY (flow_version_id) REFERENCES apv_flow_version (id) ON DELETE RESTRICT
);
CREATE INDEX idx_apv_instance__tenant_status_created ON apv_instance (tenant_id, status, created_at);
CREATE INDEX idx_apv_instance__applicant_status ON apv_instance (applicant_id, status);
CREATE INDEX idx_apv_instance__flow_status ON apv_instance (flow_id, status);
CREATE INDEX idx_apv_instance__business_ref ON apv_instance (business_ref);
CREATE INDEX idx_apv_instance__current_node ON apv_instance (current_node_id);
CREATE INDEX idx_apv_instance__form_data ON apv_instance USING GIN (form_data);

CREATE TABLE apv_business_projection (
    id                        VARCHAR(64) NOT NULL PRIMARY KEY,
    created_at                timestamp   NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by                VARCHAR(64) NOT NULL DEFAULT 'system',
    updated_at                timestamp   NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_by                VARCHAR(64) NOT NULL DEFAULT 'system',
    tenant_id                 VARCHAR(64) NOT NULL,
    flow_id                   VARCHAR(64) NOT NULL,
    flow_version_id           VARCHAR(64) NOT NULL,
    owner_instance_id         VARCHAR(64) NOT NULL,
    applied_owner_instance_id VARCHAR(64) NULL,
    target_hash               VARCHAR(64) NOT NULL,
    consistency               VARCHAR(16) NOT NULL,
    binding                   jsonb       NOT NULL,
    record_key                jsonb       NOT NULL,
    desired_status            VARCHAR(16) NOT NULL,
    desired_started_at        timestamp   NOT NULL,
    desired_finished_at       timestamp   NULL,
    desired_revision          BIGINT      NOT NULL,
    applied_revision          BIGINT      NOT NULL DEFAULT 0,
    status                    VARCHAR(16) NOT NULL,
    attempt_count             INTEGER     NOT NULL DEFAULT 0,
    next_attempt_at           timestamp   NULL,
    lease_until               timestamp   NULL,
    last_error                TEXT        NULL,
    applied_at                timestamp   NULL,
    CONSTRAINT uk_apv_business_projection__target UNIQUE (target_hash)
);
CREATE INDEX idx_apv_business_projection__tenant_status ON apv_business_projection (tenant_id, status);
CREATE INDEX idx_apv_business_projection__status_next ON apv_business_projection (status, next_attempt_at);
CREATE INDEX idx_apv_business_projection__owner ON apv_business_projection (owner_instance_id);

CREATE TABLE apv_node_visit (
    id          VARCHAR(64) NOT NULL PRIMARY KEY,
    created_at  timestamp   NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by  VARCHAR(64) NOT NULL DEFAULT 'system',
    tenant_id   VARCHAR(64) NOT NULL,
    instance_id VARCHAR(64) NOT NULL,
    node_id     VARCHAR(64) NOT NULL,
    sequence    INTEGER     NOT NULL,
    status      VARCHAR(16) NOT NULL DEFAULT 'active',
    finished_at timestamp   NULL,
    CONSTRAINT uk_apv_node_visit__instance_sequence UNIQUE (instance_id, sequence),
    CONSTRAINT fk_apv_node_visit__instance FOREIGN KEY (instance_id) REFERENCES apv_instance (id) ON DELETE CASCADE,
    CONSTRAINT fk_apv_node_visit__node FOREIGN KEY (node_id) REFERENCES apv_flow_node (id) ON DELETE RESTRICT
);
CREATE INDEX idx_apv_node_visit__node ON apv_node_visit (node_id);

CREATE TABLE apv_task (
    id                       VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at               timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by               VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at               timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_by               VARCHAR(64)  NOT NULL DEFAULT 'system',
    tenant_id                VARCHAR(64)  NOT NULL,
    instance_id              VARCHAR(64)  NOT NULL,
    node_id                  VARCHAR(64)  NOT NULL,
    visit_id                 VARCHAR(64)  NOT NULL,
    assignee_id              VARCHAR(64)  NOT NULL,
    assignee_name            VARCHAR(128) NOT NULL DEFAULT '',
    assignee_department_id   VARCHAR(64)  NULL,
    assignee_department_name VARCHAR(128) NULL,
    delegator_id             VARCHAR(64)  NULL,
    delegator_name           VARCHAR(128) NULL,
    delegator_department_id  VARCHAR(64)  NULL,
    delegator_department_name VARCHAR(128) NULL,
    sort_order               INTEGER      NOT NULL DEFAULT 0,
    status                   VARCHAR(16)  NOT NULL DEFAULT 'pending',
    read_at                  timestamp    NULL,
    parent_task_id           VARCHAR(64)  NULL,
    add_assignee_type        VARCHAR(16)  NULL,
    deadline                 timestamp    NULL,
    is_timeout               BOOLEAN      NOT NULL DEFAULT FALSE,
    is_pre_warning_sent      BOOLEAN      NOT NULL DEFAULT FALSE,
    finished_at              timestamp    NULL,
    CONSTRAINT ck_apv_task__assignee CHECK (TRIM(assignee_id) <> ''),
    CONSTRAINT fk_apv_task__instance FOREIGN KEY (instance_id) REFERENCES apv_instance (id) ON DELETE RESTRICT,
    CONSTRAINT fk_apv_task__node FOREIGN KEY (node_id) REFERENCES apv_flow_node (id) ON DELETE RESTRICT,
    CONSTRAINT fk_apv_task__visit FOREIGN KEY (visit_id) REFERENCES apv_node_visit (id) ON DELETE RESTRICT,
    CONSTRAINT fk_apv_task__parent FOREIGN KEY (parent_task_id) REFERENCES apv_task (id) ON DELETE SET NULL
);
-- One live task per person per node.
CREATE UNIQUE INDEX uk_apv_task__live ON apv_task (instance_id, node_id, assignee_id) WHERE status IN ('pending', 'waiting');
CREATE INDEX idx_apv_task__assignee_status ON apv_task (assignee_id, status);
CREATE INDEX idx_apv_task__instance ON apv_task (instance_id);
CREATE INDEX idx_apv_task__visit ON apv_task (visit_id);
CREATE INDEX idx_apv_task__deadline ON apv_task (deadline) WHERE status = 'pending' AND is_timeout = FALSE AND deadline IS NOT NULL;

CREATE TABLE apv_action_log (
    id                          VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at                  timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by                  VARCHAR(64)  NOT NULL DEFAULT 'system',
    instance_id                 VARCHAR(64)  NOT NULL,
    node_id                     VARCHAR(64)  NULL,
    task_id                     VARCHAR(64)  NULL,
    action                      VARCHAR(16)  NOT NULL,
    operator_id                 VARCHAR(64)  NOT NULL,
    operator_name               VARCHAR(128) NOT NULL,
    operator_department_id      VARCHAR(64)  NULL,
    operator_department_name    VARCHAR(128) NULL,
    ip_address                  VARCHAR(64)  NULL,
    user_agent                  VARCHAR(512) NULL,
    opinion                     TEXT         NULL,
    meta                        jsonb        NULL,
    transfer_to_id              VARCHAR(64)  NULL,
    transfer_to_name            VARCHAR(128) NULL,
    transfer_to_department_id   VARCHAR(64)  NULL,
    transfer_to_department_name VARCHAR(128) NULL,
    rollback_to_node_id         VARCHAR(64)  NULL,
    add_assignee_type           VARCHAR(16)  NULL,
    added_assignees             jsonb        NOT NULL DEFAULT '[]',
    removed_assignees           jsonb        NOT NULL DEFAULT '[]',
    cc_users                    jsonb        NOT NULL DEFAULT '[]',
    attachments                 jsonb        NULL,
    CONSTRAINT fk_apv_action_log__instance FOREIGN KEY (instance_id) REFERENCES apv_instance (id) ON DELETE CASCADE,
    CONSTRAINT fk_apv_action_log__node FOREIGN KEY (node_id) REFERENCES apv_flow_node (id) ON DELETE RESTRICT,
    CONSTRAINT fk_apv_action_log__task FOREIGN KEY (task_id) REFERENCES apv_task (id) ON DELETE RESTRICT
);
CREATE INDEX idx_apv_action_log__instance_created ON apv_action_log (instance_id, created_at);
CREATE INDEX idx_apv_action_log__task ON apv_action_log (task_id);

CREATE TABLE apv_cc_record (
    id                      VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at              timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by              VARCHAR(64)  NOT NULL DEFAULT 'system',
    instance_id             VARCHAR(64)  NOT NULL,
    node_id                 VARCHAR(64)  NULL,
    visit_id                VARCHAR(64)  NULL,
    task_id                 VARCHAR(64)  NULL,
    cc_user_id              VARCHAR(64)  NOT NULL,
    cc_user_name            VARCHAR(128) NOT NULL DEFAULT '',
    cc_user_department_id   VARCHAR(64)  NULL,
    cc_user_department_name VARCHAR(128) NULL,
    is_manual               BOOLEAN      NOT NULL DEFAULT FALSE,
    read_at                 timestamp    NULL,
    CONSTRAINT fk_apv_cc_record__instance FOREIGN KEY (instance_id) REFERENCES apv_instance (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX uk_apv_cc_record__visit_user ON apv_cc_record (visit_id, cc_user_id) WHERE visit_id IS NOT NULL;
CREATE INDEX idx_apv_cc_record__user ON apv_cc_record (cc_user_id, read_at);
CREATE INDEX idx_apv_cc_record__instance ON apv_cc_record (instance_id);

CREATE TABLE apv_delegation (
    id               VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at       timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by       VARCHAR(64)  NOT NULL DEFAULT 'system',
    updated_at       timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_by       VARCHAR(64)  NOT NULL DEFAULT 'system',
    delegator_id     VARCHAR(64)  NOT NULL,
    delegatee_id     VARCHAR(64)  NOT NULL,
    flow_category_id VARCHAR(64)  NULL,
    flow_id          VARCHAR(64)  NULL,
    starts_at        timestamp    NOT NULL,
    ends_at          timestamp    NOT NULL,
    is_active        BOOLEAN      NOT NULL DEFAULT TRUE,
    reason           VARCHAR(256) NULL,
    CONSTRAINT ck_apv_delegation__window CHECK (starts_at < ends_at),
    CONSTRAINT ck_apv_delegation__distinct CHECK (delegator_id <> delegatee_id),
    CONSTRAINT fk_apv_delegation__category FOREIGN KEY (flow_category_id) REFERENCES apv_flow_category (id) ON DELETE RESTRICT,
    CONSTRAINT fk_apv_delegation__flow FOREIGN KEY (flow_id) REFERENCES apv_flow (id) ON DELETE RESTRICT
);
CREATE INDEX idx_apv_delegation__delegator ON apv_delegation (delegator_id, is_active);
CREATE INDEX idx_apv_delegation__delegatee ON apv_delegation (delegatee_id);

CREATE TABLE apv_form_snapshot (
    id          VARCHAR(64) NOT NULL PRIMARY KEY,
    created_at  timestamp   NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by  VARCHAR(64) NOT NULL DEFAULT 'system',
    instance_id VARCHAR(64) NOT NULL,
    node_id     VARCHAR(64) NOT NULL,
    form_data   jsonb       NOT NULL,
    CONSTRAINT fk_apv_form_snapshot__instance FOREIGN KEY (instance_id) REFERENCES apv_instance (id) ON DELETE CASCADE
);
CREATE INDEX idx_apv_form_snapshot__instance_node ON apv_form_snapshot (instance_id, node_id);
CREATE INDEX idx_apv_form_snapshot__created ON apv_form_snapshot (created_at);

CREATE TABLE apv_urge_record (
    id                          VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at                  timestamp    NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by                  VARCHAR(64)  NOT NULL DEFAULT 'system',
    instance_id                 VARCHAR(64)  NOT NULL,
    node_id                     VARCHAR(64)  NOT NULL,
    task_id                     VARCHAR(64)  NULL,
    urger_id                    VARCHAR(64)  NOT NULL,
    urger_name                  VARCHAR(128) NULL,
    urger_department_id         VARCHAR(64)  NULL,
    urger_department_name       VARCHAR(128) NULL,
    target_user_id              VARCHAR(64)  NOT NULL,
    target_user_name            VARCHAR(128) NULL,
    target_user_department_id   VARCHAR(64)  NULL,
    target_user_department_name VARCHAR(128) NULL,
    message                     TEXT         NOT NULL,
    CONSTRAINT fk_apv_urge_record__instance FOREIGN KEY (instance_id) REFERENCES apv_instance (id) ON DELETE CASCADE
);
CREATE INDEX idx_apv_urge_record__task_urger_created ON apv_urge_record (task_id, urger_id, created_at);

CREATE TABLE apv_form_table (
    id                  VARCHAR(64) NOT NULL PRIMARY KEY,
    created_at          timestamp   NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by          VARCHAR(64) NOT NULL DEFAULT 'system',
    flow_id             VARCHAR(64) NOT NULL,
    version_id          VARCHAR(64) NOT NULL,
    physical_table_name VARCHAR(64) NOT NULL,
    source_field_key    VARCHAR(64) NOT NULL DEFAULT '',
    CONSTRAINT uk_apv_form_table__version_field UNIQUE (version_id, source_field_key),
    CONSTRAINT fk_apv_form_table__version FOREIGN KEY (version_id) REFERENCES apv_flow_version (id) ON DELETE CASCADE
);

CREATE TABLE apv_form_table_column (
    id               VARCHAR(64) NOT NULL PRIMARY KEY,
    created_at       timestamp   NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    created_by       VARCHAR(64) NOT NULL DEFAULT 'system',
    form_table_id    VARCHAR(64) NOT NULL,
    column_name      VARCHAR(64) NOT NULL,
    column_type      VARCHAR(32) NOT NULL,
    is_nullable      BOOLEAN     NOT NULL DEFAULT TRUE,
    source_field_key VARCHAR(64) NOT NULL,
    sort_order       INTEGER     NOT NULL DEFAULT 0,
    CONSTRAINT fk_apv_form_table_column__table FOREIGN KEY (form_table_id) REFERENCES apv_form_table (id) ON DELETE CASCADE
);
CREATE INDEX idx_apv_form_table_column__table ON apv_form_table_column (form_table_id);

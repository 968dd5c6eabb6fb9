-- The built-in directory (approval's assignee resolution): a department tree with leaders, and
-- each user's department and superior.
CREATE TABLE sys_security_department (
    id         varchar(36)  PRIMARY KEY,
    code       varchar(64)  NOT NULL,
    name       varchar(128) NOT NULL,
    parent_id  varchar(36)  NULL,
    created_at timestamp NOT NULL,
    updated_at timestamp NOT NULL
);
CREATE UNIQUE INDEX uq_sys_security_department_code ON sys_security_department (code);
CREATE INDEX ix_sys_security_department_parent ON sys_security_department (parent_id);

CREATE TABLE sys_security_department_leader (
    department_id varchar(36) NOT NULL,
    user_id       varchar(36) NOT NULL,
    PRIMARY KEY (department_id, user_id)
);
CREATE INDEX ix_sys_security_department_leader_user ON sys_security_department_leader (user_id);

ALTER TABLE sys_security_user ADD COLUMN department_id varchar(36) NULL;
ALTER TABLE sys_security_user ADD COLUMN superior_id varchar(36) NULL;
CREATE INDEX ix_sys_security_user_department ON sys_security_user (department_id);

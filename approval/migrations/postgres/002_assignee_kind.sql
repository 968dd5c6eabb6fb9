-- department_leader (17 characters) does not fit the assignee kind's VARCHAR(16).
ALTER TABLE apv_flow_node_assignee ALTER COLUMN kind TYPE VARCHAR(32);

-- department_leader (17 characters) does not fit the assignee kind's VARCHAR(16).
ALTER TABLE apv_flow_node_assignee MODIFY COLUMN kind VARCHAR(32) NOT NULL;

-- Indexes of the approval/my and approval/admin lists (issue #24 item 5): each list filters on
-- its leading columns and reads its page in index order (newest first, id as the tie-break), so
-- a page costs the same however much history the tables hold.

-- my.find_pending_tasks and get_pending_counts (assignee, pending, tenant, newest first); it
-- replaces the (assignee_id, status) index of 001, its prefix.
CREATE INDEX idx_apv_task__assignee_status_tenant_created ON apv_task (assignee_id, status, tenant_id, created_at, id);
DROP INDEX idx_apv_task__assignee_status;
-- my.find_completed_tasks (assignee, tenant, most recently finished first).
CREATE INDEX idx_apv_task__assignee_tenant_finished ON apv_task (assignee_id, tenant_id, finished_at, id);
-- admin.find_tasks (tenant, newest first) and get_metrics (tenant, by status).
CREATE INDEX idx_apv_task__tenant_created ON apv_task (tenant_id, created_at, id);
CREATE INDEX idx_apv_task__tenant_status ON apv_task (tenant_id, status, is_timeout);
-- my.find_initiated (applicant, tenant, newest first).
CREATE INDEX idx_apv_instance__applicant_tenant_created ON apv_instance (applicant_id, tenant_id, created_at, id);
-- admin.find_instances (tenant, newest first).
CREATE INDEX idx_apv_instance__tenant_created ON apv_instance (tenant_id, created_at, id);
-- my.find_cc_records (recipient, newest first).
CREATE INDEX idx_apv_cc_record__user_created ON apv_cc_record (cc_user_id, created_at, id);

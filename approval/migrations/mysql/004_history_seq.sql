-- An instance's history ordered by the command that wrote it, not by a node's clock (issue #45):
-- each action log row carries the next sequence of its instance, assigned while the command holds
-- the instance's lock, and each form snapshot the sequence of the visit that took it. Rows written
-- before keep 0 and sort first; readers order by (seq, created_at, id).
ALTER TABLE apv_action_log ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE apv_form_snapshot ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
-- The history's reads and the next sequence (MAX under the lock); it replaces (instance_id,
-- created_at) of 001.
CREATE INDEX idx_apv_action_log__instance_seq ON apv_action_log (instance_id, seq, created_at, id);
DROP INDEX idx_apv_action_log__instance_created ON apv_action_log;

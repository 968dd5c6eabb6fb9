-- SQLite does not enforce VARCHAR lengths: nothing to widen (the other dialects' 002 widens
-- apv_flow_node_assignee.kind). The file keeps the version numbers of the three dialects aligned.
SELECT 1;

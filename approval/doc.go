// Package approval is the approval workflow module: its tables, flow categories, delegations,
// flow design (create, deploy, publish), tenancy, permissions and the directory it resolves
// people through (part 1, issue #22), and the workflow engine (part 2, issue #23):
// approval/instance and the terminate_instance / reassign_task commands of approval/admin, the
// timeout, pre-warning and cleanup scanners and push notifications; and of part 3 (issue #24)
// approval/my and the approval/admin lists, metrics and instance details, business binding (the
// projection of instance state into host tables) with its admin operations, the Go extension
// points (lifecycle hooks, instance numbers, globals, business references) and storage mode
// table. The pure design logic (flow-definition parsing and deploy rules, the form-editor
// projection, form-data validation, field permissions, condition evaluation) is package
// approval/design.
//
// # Inclusion
//
// A host includes the module with svc.WithApproval (the ready binary does); without it no
// approval resource is registered (spec §1, §2.2). svc.approval.auto_migrate or `svc migrate`
// creates the tables. New fails when approval.* events are not routed to a transactional
// transport (event.ErrTxRequired naming the rule, or event.ErrNoRouteMatched):
// config.Event.Effective adds the rule approval.* → [outbox, sink] when no rule covers the
// pattern, and configs/application.toml routes it to the outbox explicitly.
//
// # Resources (spec §2.2, wire-approval §6.1–§6.3), all Bearer, permissions of §12
//
//   - approval/category: find_tree (approval.category.query; params {name contains, isActive,
//     tenantId for a super-admin}; a forest through children, siblings by sortOrder), create
//     ({id}), update, delete (approval.category.create|update|delete) on the shared crud
//     helper. A parent must be a category of the same tenant and not the category or one of its
//     descendants (400/1400); deleting a category with children, flows or delegations is 2003.
//   - approval/delegation: find_page (filters delegatorId, delegateeId, isActive in params,
//     falling back to meta; paging and sort in meta), create ({id}), update, delete
//     (approval.delegation.*) on the crud helper. The window is startsAt/endsAt; startTime/endTime
//     are accepted when those are absent (§15). Validation: delegatee and window required, start
//     before end, delegator ≠ delegatee (400/1400); a category or flow scope must name one of the
//     caller's tenant.
//   - approval/flow: create (approval.flow.create) and update (approval.flow.update) answer the
//     Flow; toggle_active (approval.flow.update); deploy (approval.flow.deploy) answers the draft
//     FlowVersion; publish_version (approval.flow.publish); find_flows (page/pageSize in params,
//     default 20, at most 1000; keyword in the name, categoryId, isActive, every label pair;
//     order name), find_versions (newest first, without payloads), find_initiators, get_graph
//     ({flow, version, nodes, edges}; the version asked for, else the published one, null when
//     none) under approval.flow.query. Commands are audited.
//
// Flow rules: code immutable and unique per tenant (40006); bindingMode standalone or business
// (40012); a standalone flow takes no businessBinding (40017); labels follow the shared labels
// rule (400/1400); the title template is a Go text/template, empty takes
// "{{.flowName}}-{{.instanceNo}}" (40009 when it does not parse); initiator kinds user, role,
// department (40013) with ids; new flows are inactive with currentVersion 0; update replaces
// labels and initiators wholesale. A business binding is checked against the live schema
// through Options.Tables (the schema module's inspector): required parts (40011), identifiers
// (40008), one column per role (40016), status-mapping keys are instance statuses with
// non-empty values (40020), table and columns exist (40018), keyColumns are exactly the primary
// key or a full unique key with NOT NULL columns (40019).
//
// deploy: storageMode json (default) or table (see Table storage); anything else 40014. The form document, when given, is projected by design.ParseFormSchema
// (40010 naming the rule when it does not), the definition checked by design.ParseFlow against
// its fields (40005 naming the broken rule); the version is the flow's next number, status
// draft, flowSchema and formSchema stored as sent (JSON-compacted), formFields derived, the
// flow's business binding snapshotted; apv_flow_node rows carry the resolved designer defaults
// (and the table's defaults for settings a kind does not have), apv_flow_node_assignee and
// apv_flow_node_cc hold the assignee and cc rules, apv_flow_edge the edges (key = designer edge
// id, source/target by persistent node id and designer key). publish_version: only a draft
// (40004); the previous published version is archived, the flow's currentVersion set; at most
// one published version per flow is also a unique index.
//
// # Engine (wire-approval §6.4, §7, §8, §10, §17): approval/instance
//
//   - start (approval.instance.start): flow by (tenantId — empty: the caller's —, flowCode):
//     40001 unknown or another tenant's, 40002 inactive, 40003 nothing published, 40103 the
//     initiation rule refuses, 40107 a business flow without businessRef; form data validated
//     (40401); the instance (number <CODE>-<yyyymmddhhmmss>-<8 hex>, title from the template,
//     applicant and department from the directory) is inserted with action submit and
//     approval.instance.created, and the graph is walked from the start node. Answers the
//     Instance.
//   - process_task (approval.task.process): approve | handle | reject | transfer | rollback by
//     the assignee of a pending task (40201, 40202, 40203; 40102 when the instance is not
//     running; handle on an approval node 40204; approve on a handle node handles); opinion
//     required 40208; form data merged for editable/required fields only, required enforced on
//     approve/handle. transfer: 40207, target blank, self or live at the node 40215. rollback:
//     40205, targets from the visit trail by rollbackType (previous, start, any, specified),
//     else 40213; keep restores the target's snapshot, clear nulls the form; start → returned.
//   - withdraw (applicant, 40212; 40104 unless running or returned), resubmit (applicant; 40105
//     unless returned or withdrawn; restarts from start on the same version), add_cc (a
//     participant, 40701; 40209 when the current node forbids it), mark_cc_read (a recipient,
//     40701), add_assignee (before/after/parallel; 40206, 40211, 40216 when nobody new),
//     remove_assignee (a live peer at the caller's node; 40210, 40214 last one, 40204 own task),
//     urge_task (the applicant or a task holder, 40701; 40601 within the node's cooldown, default
//     30 minutes; rate limit 10/min).
//   - approval/admin terminate_instance (approval.instance.terminate; 40702 unless running,
//     returned or withdrawn) and reassign_task (approval.task.reassign; 40215). Exported as
//     Service.AdminOps so the approval/admin queries can join the same resource.
//
// # Queries (wire-approval §6.5, §6.6, issue #24 items 1, 3, 5)
//
//   - approval/my (query_my.go, query_my_lists.go; Bearer, no permission, the caller's own rows in its
//     tenant — a super-admin: every tenant or the tenantId it asks): find_available_flows
//     (active, published, isAllInitiationAllowed or an initiator row matching the caller — the
//     rule start applies, initiatorAllows; order name), get_start_form (start's gates through
//     initiable: 40001, 40002, 40003, 40103; the published version's formSchema),
//     find_initiated (status, keyword in the title; newest first), find_pending_tasks (newest
//     first), find_completed_tasks (approved, rejected, handled, transferred, rolled_back; last
//     finished first), find_cc_records (isRead; newest first), get_pending_counts. The operation
//     list is myQueryOps, for the instance detail to join.
//   - approval/admin (query_admin.go, query_metrics.go): find_instances
//     (approval.instance.query; applicantId, status, flowId, keyword in the title or number),
//     find_tasks (approval.task.query; assigneeId, instanceId, status), both newest first;
//     find_action_logs (approval.action_log.query; instanceId required; oldest first);
//     get_metrics (approval.metrics.query). A caller who is not a super-admin sees its own tenant
//     whatever tenantId it sends.
//
// Paging: page/pageSize in params (default 20, at most 1000), answer {page, size, total, items}
// as find_flows. Ties in an order are broken by id.
//
// Statement bounds (held by TestQueryStatementBounds with 1 and 25 rows): every list answers in
// at most 2 statements on the apv_* tables — the page SELECT joining flow, node, category and
// applicant names (a task's node name by a scalar subquery: a fourth joined table costs the
// pending list, planned on every call, half again its plan) and, only when the page is full (or empty past the first page) and so cannot
// give the total itself, a COUNT over the filtered base table (joined to apv_instance only where
// the tenant or a filter lives there); find_available_flows: the flows, then one IN lookup of the
// restricted flows' initiator rows (plus the caller's department from the directory when there
// are any), the page cut in memory; get_start_form 1 (2 for a restricted flow; the published
// version and its form come from the caches start fills, 6 more on a version's first read);
// get_pending_counts 2; get_metrics 3 (instances, tasks, projections grouped by status).
//
// Metrics: the count maps carry every status with zeros; avgCompletionSeconds averages
// finished_at − created_at over approved, rejected and terminated instances, -1 when none;
// timeoutTaskCount counts pending tasks marked timed out; businessProjectionCounts are read from
// apv_business_projection, pendingBindingFailures is its failed count (awaiting a retry) and
// pendingBusinessProjections the rows not applied yet (pending, processing, failed); tenantId is
// the tenant counted ("" when a super-admin counts every tenant).
//
// Walk: start and end pass (end → approved, approval.instance.completed); condition nodes take
// design.EvalBranch's branch and write no visit; cc nodes deliver (dedupe per visit) and wait
// for all reads when isReadConfirmRequired; approval/handle nodes write a form snapshot, honour
// executionType, resolve assignees (user, role, department leaders, self, superior,
// department_leader, form_field; dedupe), the same-applicant action per seat (self_approve,
// auto_pass, exclude, transfer_superior), the empty-assignee action, delegation chains and
// consecutive-approver auto-pass, and create tasks (parallel: all pending; sequential: first
// pending, the rest waiting; deadline from timeoutHours). Pass rules all/any/ratio over live
// outcomes with early rejection; node passed → remaining tasks canceled, always/on_approve CCs,
// advance; rejected → always/on_reject CCs, instance rejected. Waiting tasks emit
// approval.task.created when they become pending.
//
// Locking: every command reads the instance row FOR UPDATE first (PostgreSQL, MySQL — with
// READ COMMITTED on MySQL so the reads after the lock see the previous holder's commit); a
// command on a task then locks and reads, in one statement, every task of the task's visit with
// the instance's last visit sequence (visits and tasks are created, and tasks change status,
// only under the instance's lock, so that statement sees them all — a flag set without it, as
// the pre-warning's, is waited for by the row lock; the next visit's sequence needs no read of
// its own);
// SQLite transactions are BEGIN IMMEDIATE. Concurrent deciders, scanners and
// withdrawals on one instance are serialised (TestEngineRace, TestScanners).
//
// Writes: a command's inserts and updates of its visits, tasks, cc records, action logs, form
// snapshots and instance row are deferred (run.later) into the transaction's batching
// event.TxScope, with the outbox rows of its events, and flushed together right before the next
// statement the command builds on its transaction (runTx) and before the commit — on PostgreSQL
// one round trip per flush. No statement of a command reads past a pending write. Writes render
// their rows when flushed, so start's instance insert, still waiting at the end of the command,
// writes the final row and the instance's update is not added (TestCommandReads). The published
// version of a flow is cached per flow id and version number (like the graph per version);
// when names and departments both come from Options.Directory, the operator's department is
// the one ResolveUsers answers (no UserDepartment lookup).
//
// Workers: approval-timeouts (svc.approval.timeout_scan_interval), approval-pre-warnings
// (pre_warning_scan_interval), approval-cleanup (cleanup_scan_interval, with
// form_snapshot_retention, urge_record_retention, cc_record_retention), approval-binding
// (business_binding.scan_interval, see Business binding) — Service.ScanTimeouts,
// ScanPreWarnings, Cleanup, ScanProjections; multi-node safe (timeouts re-checked under the instance lock,
// warnings claimed by a conditional update, idempotent deletes).
//
// Push: approval.task.created and approval.task.deadline_warning (to the assignee),
// approval.task.urged (to the target) and approval.cc.notified (to the recipients) are pushed
// with the event type as message type through Options.Notifier (approval.Notifier, a
// PushToUsers method: the module does not import package push), else the push module's
// (consumer group svc.approval.push).
//
// Rollback targets come from the trail that led to the current visit: a re-entered node drops
// its earlier visit and what followed it, so a node downstream is never a target.
// Consecutive-approver auto-approvals publish approval.task.approved (operator: the assignee).
// passRatio is read as the percentage deploy accepts and the client sends ((0, 100]): a ratio of
// 1 is one percent — the older engine's rescaling of values ≤ 1 (a 0..1 scale, wire-approval §3)
// is not applied.
//
// Deviations: condition nodes have no visit; tasks are never skipped (a node finishing early
// cancels its waiting tasks); 40106 guards internal moves only — through /api each command's own
// precondition code answers first (40102, 40104, 40105, 40702), as the original's client
// expects for its buttons; department CC rules copy the department's leaders (the directory
// knows no members); without Options.InstanceNoGenerator the instance number format is ours.
//
// # Transitions and extension points (wire-approval §7, §11)
//
// Every instance status change goes through run.transition: start ("" → running), the end
// (approved), a rejection (rejected), terminate, rollback to start (returned), withdraw and
// resubmit (→ running). It sets status and finished_at (cleared on running), calls
// Options.LifecycleHooks (OnInstanceCreated at start, OnInstanceTransition(from, to) after; in
// the command's transaction, tx passed; an error rolls the command back and is answered) and
// records the business projection's next desired revision. Options.InstanceNoGenerator replaces
// the instance number (unique, ≤ 64 characters), Options.GlobalsResolver fills apv_instance.globals
// at start (conditions read them), Options.BusinessRefProvider supplies a business flow's
// businessRef when start carries none.
//
// # Business binding (wire-approval §9, §6.6, §10)
//
// A business flow's start resolves the record key from businessRef and the published version's
// binding snapshot (one key column: businessRef verbatim; composite: a JSON object of exactly
// the key columns with string or number values, else 40109 naming the problem) and claims the
// record's apv_business_projection row (target_hash = SHA-256 of the table and the canonical
// key, unique; apv_instance.business_projection_id points at it): a record owned by an instance
// that is not final is 40108 (also for a concurrent claim: the unique key); one owned by a final
// instance is superseded — the owner changes, applied_owner_instance_id stays the old owner
// until the new state is written. Each transition sets desired_status, desired_started_at (the
// instance's creation), desired_finished_at, desired_revision+1, status pending, due now.
//
// Apply (Projection, applyProjection): UPDATE <table> SET <statusColumn> = statusMapping[status]
// (else the status), <instanceIdColumn> = owner[, <startedAtColumn>][, <finishedAtColumn> =
// finished or NULL] WHERE <key columns> AND (<instanceIdColumn> = applied owner — IS NULL
// before the first apply — OR = owner), identifiers quoted by the dialect; no matching row
// (missing record, or the column names a newer owner or the host's value) is a failure, so a
// stale owner never overwrites a newer one. svc.approval.business_binding.consistency
// (recorded on the row at claim): synchronous applies inside the approval transaction — a
// failure rolls the command back: 40109 naming the record when no row matched, an internal error
// (logged, not sent) when the database refused the UPDATE; eventual leaves it to the worker.
//
// Worker approval-binding (every business_binding.scan_interval, all nodes): ClaimProjections
// leases up to batch_size due rows (pending/failed with next_attempt_at due, or processing
// with lease_until past) — SELECT … FOR UPDATE SKIP LOCKED then a conditional UPDATE to
// processing with lease_until = now + 1 min (PostgreSQL, MySQL); SQLite runs the same under its
// write lock. ApplyProjection then locks the row and applies the latest revision unless
// applied_revision already reached it (another worker, or one whose lease ran out, did), writing
// applied_revision, applied_owner_instance_id, applied_at, status applied: each revision is
// written at most once even when a worker dies between claim and apply. A failure sets status
// failed, attempt_count+1, next_attempt_at = now + 1 s doubling up to 1 h, last_error, and
// publishes approval.instance.binding_failed (BindingFailedEvent: trigger started | completed |
// returned | withdrawn | resubmitted, status, businessTable, errorMessage) outside any
// transaction, on the failing node's bus.
//
// Cost: a standalone flow pays nothing; a business flow's start 3 more statements (eventual: claim
// select, insert, revision update) or 4 (synchronous: + the business UPDATE), each later status
// change 2 or 3 (projection lock, revision update, the business UPDATE when synchronous); the
// worker 4 statements per scan plus 5 per applied projection (TestBindingWorker runs it).
//
// approval/admin find_business_projections (approval.binding.query; {tenantId? — super-admin
// only —, status?, page, pageSize}; admin.BusinessProjection, most recently changed first) and
// retry_business_projection (approval.binding.retry, audited; {projectionId}; 40110 unknown or
// another tenant's; status pending, due now, lease released).
//
// # Table storage (wire-approval §3)
//
// A version deployed with storageMode table (40014 "storage mode table: …" without a form
// document, or when a field key is no identifier or is id, instance_id, row_index,
// created_at, or a detail table's name would pass 63 characters) gets generated tables when it
// is published, created before the publish transaction (CREATE TABLE IF NOT EXISTS; MySQL
// commits DDL implicitly) and recorded in apv_form_table / apv_form_table_column inside it:
// apv_form_<code>_<version id without hyphens> (apv_form_<version id> when longer than 63
// characters) with id, instance_id UNIQUE, a column per non-table field and created_at; per
// detail-table field apv_form_<version id>__<field> with id, instance_id (indexed), row_index,
// a column per column field and created_at. Column types: string VARCHAR(512), text
// TEXT/LONGTEXT, integer BIGINT, decimal DECIMAL(20, scale or 6; a number without a type too),
// boolean BOOLEAN, date DATE, datetime TIMESTAMP/DATETIME(6), json JSONB/JSON/TEXT. start and
// resubmit replace the instance's rows (delete + insert) in the command's transaction;
// apv_instance.form_data stays the source every read uses, and form edits by decisions or a
// rollback's data strategy reach the tables at the next resubmit (as in the original).
//
// # Instance detail (wire-approval §6.5–§6.7, §8, §15): query_detail.go, query_timeline.go, query_progress.go, query_viewer.go
//
//   - approval/my get_instance_detail ({instanceId}; no permission): InstanceDetail {instance
//     (InstanceInfo with flowId and flowCode, §15), formSchema, timeline, flowGraph,
//     availableActions, fieldPermissions, myTask} for the applicant, a task holder (any status)
//     or a CC recipient, else 40701; another tenant's or an unknown instance 40101.
//   - approval/admin get_instance_detail (approval.instance.detail): {instance
//     (InstanceDetailInfo: + tenantId, flowVersionId; unfiltered formData), formSchema, timeline,
//     flowGraph}; tenant-checked like the commands.
//
// Timeline: one entry per visit in sequence (condition nodes have none; re-entries repeat);
// participants are the visit's tasks with the outcome of the log that finished them (approve,
// handle, reject, transfer, rollback, reassign: opinion, attachments, actionTime, transferTo);
// CC records belong to their visit (manual ones to their node's latest visit begun by then);
// activities are the side-action logs (transfer, rollback, add_assignee, remove_assignee,
// add_cc, reassign, execute, submit — the k-th submit/resubmit to the k-th start visit —,
// resubmit) and urges (message as opinion) in time order; withdraw and terminate are milestone
// entries with their one activity, placed after the visits of the round they ended; the end
// node's visit is the `end` entry. Flow graph: the stored flowSchema's node and edge order and
// positions; status = the latest visit's status, pending if none, a condition node passed when
// a reached node leads into it and it leads to a reached node; participants, CC recipients and
// activities of all the node's visits in order (the client's FlowGraphNodeData), times of the
// latest.
//
// availableActions and myTask run the commands' own checks (rules.go: decisionErr,
// decisionAction, transferErr, rollbackErr + rollbackTrail, addAssigneeErr, removeAssigneeErr,
// withdrawErr, resubmitErr, participantErr, manualCCErr, urgeCooldown), so every listed action
// is accepted and every other refused (TestDetailInvariant). Order: withdraw, resubmit,
// approve|handle, reject, transfer, rollback (when a target exists), add_assignee (the node's
// types), remove_assignee (live peers of the visit), add_cc, urge. Choices: add_cc and urge
// follow the commands — any participant (applicant or task holder, CC recipients excluded) may
// send them, so they are listed for them, not only for the pending-task holder; urge is listed
// when some pending task is out of the caller's cooldown; approve on a handle node is accepted
// by process_task as handle but only handle is listed.
//
// fieldPermissions (§8) for every top-level form field: max over the viewer's roles on hidden
// < visible < editable < required — each own task: the node's permission (absent: visible),
// clamped to read-only unless it is the pending task process_task would accept; each CC
// record: its node's permission, read-only; the applicant: visible, or editable (required for
// required fields) while resubmit would accept (the start node has no field permissions and
// resubmit takes every field); no role: hidden. Hidden fields are stripped from formData;
// without a form document (no fields) formData is whole and fieldPermissions absent.
//
// Query bounds: both details run DetailStatements = 7 statements (instance, flow, visits,
// tasks, action logs, CC records, urge records — one each whatever their number) once the
// version's graph is cached, 5 more on a version's first read (TestDetailStatements).
//
// # Form data (wire-approval §5, §13)
//
// Service.ValidateFormData (start, resubmit) and ValidateGrowth (task processing) run
// package design's checks with svc.approval.form_data_max_bytes and answer failures as 40401
// with the approval_form_field_* / approval_form_data_too_large message and params (FormDataError);
// the module's catalog holds design's messages (i18n.Union). The engine calls them.
//
// # Tenancy (wire-approval §8)
//
// The caller's tenant is read from Principal.Details under tenant_id, tenantId, TenantID or
// Tenant; a principal without details (the built-in user store) is in tenant "default";
// details without a tenant fail closed (40701, approval_tenant_not_resolved). The role
// approval:super_admin (and the system principal) crosses tenants: its lists span every tenant
// unless it asks for one (tenantId), it may write to any tenant. Everyone else reads and writes
// only its own tenant: tenantId is forced on category create, a different tenantId on flow
// create answers 40701, and another tenant's rows are not found (2001 for the crud resources,
// 40001/40007 for flows and versions). Delegations carry no tenant: a caller who is not a
// super-admin sees and edits only the delegations it gives (delegatorId stamped on create and
// pinned on update).
//
// # Events (wire-approval §10)
//
// The engine's events (InstanceEvent payloads) are listed in docs/approval.md; approval.flow.created {categoryId}, approval.flow.updated, approval.flow.deployed {versionId,
// version}, approval.flow.toggled {isActive}, approval.flow.published {versionId}, each with
// flowId, tenantId, code, name, occurredTime (FlowEvent), published inside the transaction of
// the change (event.InTx with a TxScope): a rolled-back change publishes nothing.
//
// # Directory
//
// Assignees (superior, department leaders, role users), user names and departments come from
// Options.Directory or its parts (Assignees, Users, Departments); the composition root passes
// the built-in directory (security.Service.Directory: departments with leaders, each user's
// department and superior, managed by `svc dept` and `svc user set-department|set-superior`;
// user names and departments cached per server and kept current by the security change feed)
// for every part the host leaves nil. The engine resolves through Service.Assignees, Users and
// Departments.
//
// # Tables (wire-approval §3), migrations/{postgres,mysql,sqlite}/001_init.sql
//
// apv_flow_category, apv_flow, apv_flow_initiator, apv_flow_version, apv_flow_node,
// apv_flow_node_assignee, apv_flow_node_cc, apv_flow_edge, apv_instance,
// apv_business_projection, apv_node_visit, apv_task, apv_action_log, apv_cc_record,
// apv_delegation, apv_form_snapshot, apv_urge_record, apv_form_table, apv_form_table_column,
// with the original's unique keys, foreign keys, checks and indexes. The partial unique keys
// (one published version per flow, one live task per person and node) are generated columns
// with a unique index on MySQL/MariaDB. 002_assignee_kind (PostgreSQL, MySQL) widens
// apv_flow_node_assignee.kind to VARCHAR(32): department_leader has 17 characters (SQLite does
// not enforce the length; its 002 is an empty placeholder keeping the version numbers aligned).
// 003_query_indexes adds the indexes of the my/admin lists (filter columns, then the order
// column and id) and replaces apv_task (assignee_id, status) by (assignee_id, status, tenant_id,
// created_at, id).
//
// # Config keys (spec §8.3)
//
// svc.approval.auto_migrate, form_data_max_bytes, delegation_max_depth, the three scan
// intervals, the three retentions and business_binding.consistency (synchronous | eventual),
// scan_interval (10s), batch_size (100) are used.
//
// # Metrics
//
// Stats counts the live tasks and open instances by status; the composition root reports them
// as svc_approval_tasks and svc_approval_instances at scrape time (docs/operations.md).
//
// # Compatibility choices
//
//   - Ids are UUIDv7 strings in VARCHAR(64) columns (the original's VARCHAR(32) cannot hold them);
//     clients treat ids as opaque.
//   - Invalid labels, a missing or foreign category, a foreign parent and an unknown delegation
//     scope answer 400/1400 with a message: the original has no code for them.
//   - Duplicate category codes answer 2002 (the crud helper's code); flow codes 40006.
//   - get_graph answers nodes and edges too (the client reads flow and version).
//   - delete_many and find_all are not served on category and delegation (the client sends
//     neither).
//   - find_action_logs on another tenant's (or an unknown) instance answers an empty page, not an
//     error: the tenant is checked by the join that keeps the query at two statements or fewer.
//   - The original does not define pendingBindingFailures and pendingBusinessProjections beyond
//     the client's labels ("awaiting retry", "not converged"): failed, and not applied.
package approval

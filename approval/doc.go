// Package approval is the approval workflow module: its tables, flow categories, delegations,
// flow design (create, deploy, publish), tenancy, permissions and the directory it resolves
// people through (part 1, issue #22), and the workflow engine (part 2, issue #23):
// approval/instance and the terminate_instance / reassign_task commands of approval/admin, the
// timeout, pre-warning and cleanup scanners and push notifications. Not built yet: the
// approval/my and approval/admin queries, business binding projection and table storage. The
// pure design logic (flow-definition parsing and deploy rules, the form-editor projection,
// form-data validation, field permissions, condition evaluation) is package approval/design.
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
// deploy: storageMode json (default); table answers 40014 "not supported yet" until part 3;
// anything else 40014. The form document, when given, is projected by design.ParseFormSchema
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
// READ COMMITTED on MySQL so the reads after the lock see the previous holder's commit), then
// its task row; SQLite transactions are BEGIN IMMEDIATE. Concurrent deciders, scanners and
// withdrawals on one instance are serialised (TestEngineRace, TestScanners).
//
// Workers: approval-timeouts (svc.approval.timeout_scan_interval), approval-pre-warnings
// (pre_warning_scan_interval), approval-cleanup (cleanup_scan_interval, with
// form_snapshot_retention, urge_record_retention, cc_record_retention) — Service.ScanTimeouts,
// ScanPreWarnings, Cleanup; multi-node safe (timeouts re-checked under the instance lock,
// warnings claimed by a conditional update, idempotent deletes).
//
// Push: approval.task.created and approval.task.deadline_warning (to the assignee),
// approval.task.urged (to the target) and approval.cc.notified (to the recipients) are pushed
// with the event type as message type through Options.Notifier, else the push module's
// (consumer group svc.approval.push).
//
// Deviations: condition nodes have no visit; department CC rules copy the department's
// leaders (the directory knows no members); globals are empty and the instance number format is
// ours (no InstanceNoGenerator/InstanceGlobalsResolver/lifecycle hooks yet); business flows keep
// businessRef but project nothing yet.
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
// the built-in directory (security.Directory: departments with leaders, each user's department
// and superior, managed by `svc dept` and `svc user set-department|set-superior`) for every
// part the host leaves nil. The engine resolves through Service.Assignees, Users and
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
// not enforce the length).
//
// # Config keys (spec §8.3)
//
// svc.approval.auto_migrate, form_data_max_bytes, delegation_max_depth, the three scan
// intervals and the three retentions are used; business_binding.* is validated by package
// config for part 3.
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
package approval

// Package approval is the approval workflow module: flow categories, delegations and flow
// design (create, deploy, publish); the workflow engine that starts and runs instances
// (approval/instance, the approval/admin commands, the timeout, pre-warning and cleanup
// workers); its read side (approval/my and the approval/admin lists, metrics and instance
// details); business binding (an instance's state projected into a host table) and table
// storage. The pure design logic — flow-definition parsing and deploy rules, the form-editor
// projection, form-data validation, field permissions, condition evaluation — is package
// approval/design.
//
// This comment is a contents page. The module's behaviour, its rules and error codes, and the
// choices it makes where the original is silent are in docs/approval.md (its "Reference"
// section holds what this comment used to say in full); the designer's rules are in
// docs/approval-design.md.
//
// # Reading the code
//
// Following one decision is one path: a command handler in command_*.go locks the instance,
// builds a run and calls the engine; the engine (run*.go) walks the graph and writes; the read
// side (query_*.go) only reads what the commands wrote.
//
//   - Module: module.go (Options, New, Module), errors.go, events.go (payloads, inTx),
//     push.go, hooks.go (Go extension points), directory.go, tenancy.go (the caller and its
//     tenant), formdata.go.
//   - Definitions: model.go (apv_flow_* rows, typed with design's enumerations), category.go,
//     delegation.go, flow.go, flow_query.go, deploy.go (deploy, publish_version), binding.go,
//     formtable.go (table storage), published.go, graph.go (a deployed version loaded for the
//     engine, cached).
//   - Commands: command_start.go (start), command_decide.go (process_task: approve, handle,
//     reject, transfer, rollback), command_instance.go (withdraw, resubmit, add_cc,
//     mark_cc_read), command_task.go (add_assignee, remove_assignee, urge_task),
//     command_admin.go (terminate_instance, reassign_task), scanner.go (the workers' commands).
//     rules.go holds every command's precondition as a pure function, which the read side
//     reuses to list a viewer's actions.
//   - Engine: run.go (run: one command's locked instance, graph, operator and clock; its methods
//     take the command's ctx), run_walk.go (entering nodes: start, condition, cc, task nodes,
//     the end), run_assignees.go (who gets a task: rules, same-applicant, delegation,
//     empty-assignee), run_judge.go (task status changes and the pass rule), run_writes.go
//     (writeBatch: writes rendered when queued, flushed by name before the reads that need
//     them and before the commit), runtime_model.go (apv_instance, visits,
//     tasks, logs).
//   - Read side: the queries type, query_page.go (paging), query_my.go and query_my_lists.go
//     (approval/my), query_admin.go and query_metrics.go (approval/admin, Stats),
//     query_detail.go, query_timeline.go, query_progress.go and query_viewer.go
//     (get_instance_detail).
//   - Business binding: projection.go (claim and apply; terminate_instance's escape hatch, which
//     records a write that fails instead of refusing), projection_worker.go (the approval-binding
//     worker, which retries failed projections of either consistency), projection_admin.go (its
//     admin operations).
//   - Messages: every client-facing error is a template of errors.go whose message is a key of
//     messages/{en,zh-CN}/approval.json; a refusal's cause is logged with the request id
//     (Service.explain), never sent.
//   - Metrics: metrics.go registers on app.Deps.Metrics svc_approval_tasks,
//     svc_approval_instances and svc_approval_business_projections, read from Stats at scrape
//     time (docs/operations.md; nothing with Deps.Metrics nil).
//
// # Resources (spec §2.2, wire-approval §6), all Bearer
//
//   - approval/category: find_tree, create, update, delete (approval.category.*).
//   - approval/delegation: find_page, create, update, delete (approval.delegation.*).
//   - approval/flow: create, update, toggle_active, deploy, publish_version, find_flows,
//     find_versions, find_initiators, get_graph (approval.flow.*); and svc's own
//     validate_design (approval.flow.deploy, validate_design.go), which the original's client
//     does not know: deploy's checks without writing, every broken rule with its node, for the
//     console's flow designer.
//   - approval/instance: start, process_task, withdraw, resubmit, add_cc, mark_cc_read,
//     add_assignee, remove_assignee, urge_task (approval.instance.*, approval.task.*).
//   - approval/my (no permission): find_available_flows, get_start_form, find_initiated,
//     find_pending_tasks, find_completed_tasks, find_cc_records, get_pending_counts,
//     get_instance_detail.
//   - approval/admin: terminate_instance, reassign_task, find_instances, find_tasks,
//     find_action_logs, get_metrics, get_instance_detail, find_business_projections,
//     retry_business_projection.
//
// # Config keys (spec §8.3)
//
// svc.approval.auto_migrate, form_data_max_bytes, delegation_max_depth, timeout_scan_interval,
// pre_warning_scan_interval, cleanup_scan_interval, form_snapshot_retention,
// urge_record_retention, cc_record_retention, business_binding.consistency (synchronous |
// eventual), business_binding.scan_interval, business_binding.batch_size (config.Approval).
//
// # Tables (wire-approval §3), migrations/{postgres,mysql,sqlite}
//
// apv_flow_category, apv_flow, apv_flow_initiator, apv_flow_version, apv_flow_node,
// apv_flow_node_assignee, apv_flow_node_cc, apv_flow_edge, apv_instance,
// apv_business_projection, apv_node_visit, apv_task, apv_action_log, apv_cc_record,
// apv_delegation, apv_form_snapshot, apv_urge_record, apv_form_table, apv_form_table_column;
// table storage adds apv_form_<code>_<version> tables at publish. An instance's history is
// ordered by apv_action_log.seq (the instance's next, assigned under its lock by run.log) and a
// keep rollback restores the snapshot of the highest apv_form_snapshot.seq (its visit's
// sequence), never by a node's clock (migration 004, docs/approval.md "History order").
//
// # Workers
//
// approval-timeouts (Service.ScanTimeouts), approval-pre-warnings (ScanPreWarnings),
// approval-cleanup (Cleanup), approval-binding (ScanProjections); each multi-node safe.
//
// # Events (wire-approval §10)
//
// approval.flow.{created,updated,deployed,toggled,published} (FlowEvent) and the engine's
// approval.instance.*, approval.node.auto_passed, approval.task.*, approval.cc.notified
// (InstanceEvent) and approval.instance.binding_failed (BindingFailedEvent), published inside
// the transaction of the change: New fails unless approval.* is routed to a transactional
// transport.
//
// # Spec sections
//
// spec §1, §2.2, §8.3; wire-approval §3 (tables), §4 (enumerations), §5 and §13 (form data),
// §6.1–§6.7 (resources), §7 (instance states), §8 (decisions, tenancy, field permissions),
// §9 (business binding), §10 (events), §11 (extension points), §12 (permissions), §15
// (client compatibility), §17 (engine).
package approval

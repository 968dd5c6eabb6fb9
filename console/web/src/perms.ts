// Permission tokens the console checks before showing a page or a button (each is the token
// the server itself requires for the operation behind it; docs/console.md lists them).
export const P = {
  monitor: "sys.monitor.query",
  schema: "sys.schema.query",
  cronQuery: "cron.schedule.query",
  cronManage: "cron.schedule.manage",
  cronRuns: "cron.run.query",
  userQuery: "security.user.query",
  userCreate: "security.user.create",
  userUpdate: "security.user.update",
  userDisable: "security.user.disable",
  userRoles: "security.user.roles",
  userPassword: "security.user.password",
  userTotp: "security.user.totp",
  sessionQuery: "security.session.query",
  sessionRevoke: "security.session.revoke",
  fileQuery: "sys.storage.file.query",
  fileDelete: "sys.storage.file.delete",
  fileRead: "sys.storage.file.read",
  // approval
  approvalStart: "approval.instance.start",
  approvalFlowQuery: "approval.flow.query",
  approvalFlowUpdate: "approval.flow.update",
  approvalFlowPublish: "approval.flow.publish",
  approvalInstanceQuery: "approval.instance.query",
  approvalInstanceDetail: "approval.instance.detail",
  approvalTerminate: "approval.instance.terminate",
  approvalTaskQuery: "approval.task.query",
  approvalReassign: "approval.task.reassign",
  approvalMetrics: "approval.metrics.query",
  approvalCategoryQuery: "approval.category.query",
  approvalCategoryCreate: "approval.category.create",
  approvalDelegationQuery: "approval.delegation.query",
  approvalDelegationDelete: "approval.delegation.delete",

  // integration

  // events
  eventQuery: "sys.event.query",
  eventManage: "sys.event.manage",

} as const;

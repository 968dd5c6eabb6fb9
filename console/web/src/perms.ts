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

  // integration
  itgSystemQuery: "integration.system.query",
  itgSystemCreate: "integration.system.create",
  itgSystemUpdate: "integration.system.update",
  itgSystemDelete: "integration.system.delete",
  itgContractQuery: "integration.contract.query",
  itgContractCreate: "integration.contract.create",
  itgContractUpdate: "integration.contract.update",
  itgContractDelete: "integration.contract.delete",
  itgAdapterQuery: "integration.adapter.query",
  itgAdapterCreate: "integration.adapter.create",
  itgAdapterUpdate: "integration.adapter.update",
  itgAdapterDelete: "integration.adapter.delete",
  itgRouteQuery: "integration.route.query",
  itgRouteCreate: "integration.route.create",
  itgRouteUpdate: "integration.route.update",
  itgRouteDelete: "integration.route.delete",
  itgCodeMapQuery: "integration.code_map.query",
  itgCodeMapCreate: "integration.code_map.create",
  itgCodeMapUpdate: "integration.code_map.update",
  itgCodeMapDelete: "integration.code_map.delete",
  itgLogQuery: "integration.log.query",
  itgDryRun: "integration.ops.dry_run",
  itgDryRunInbound: "integration.ops.dry_run_inbound",
  itgTestConnection: "integration.ops.test_connection",
  itgDiagnose: "integration.ops.diagnose_routes",
  itgKeyStatus: "integration.ops.key_status",

  // events

} as const;

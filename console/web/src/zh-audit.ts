// Simplified Chinese texts of the Audit page and its link from Users, keyed by the English text
// (tools/i18n-check.mjs keeps this list and the sources in step).
export const zhAudit: Record<string, string> = {
  "API call": "API 调用",
  "Action": "动作",
  "Any result": "任意结果",
  "Audit": "审计",
  "Audit record": "审计记录",
  "Audit trail": "审计轨迹",
  "Calls and failures": "调用与失败",
  "Detail": "明细",
  "Last 24 hours": "最近 24 小时",
  "Last 30 days": "最近 30 天",
  "Last 7 days": "最近 7 天",
  "Last hour": "最近 1 小时",
  "No audit records match.": "没有匹配的审计记录。",
  "Resource": "资源",
  "Security event": "安全事件",
  "Time range": "时间范围",
  "User agent": "User-Agent",
  "User id or name (comma-separated)": "用户 ID 或名称(逗号分隔)",
  "anonymous": "匿名",
  "{calls} calls, {failures} failed": "{calls} 次调用,{failures} 次失败",
};

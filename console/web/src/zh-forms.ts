// Simplified Chinese for the pickers, the form designer and the approval administration's
// category and delegation editing (pickers.tsx, pages/approval-formdesign.tsx, approval-admin.tsx).
export const zhForms: Record<string, string> = {
  "Add assignees": "加签",
  "Chosen": "已选",
  "Department id, then Enter": "输入部门 ID 后回车",
  "New assignee": "新处理人",
  "Options": "选项",
  "Send a copy to": "抄送给",
  "Search to change…": "搜索以更换…",
  "Search…": "搜索…",
  "Use the id “{id}”": "使用 ID “{id}”",
};

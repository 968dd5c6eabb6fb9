export { default as en } from "zod/v4/locales/en.js";
export { default as zhCN } from "zod/v4/locales/zh-CN.js";

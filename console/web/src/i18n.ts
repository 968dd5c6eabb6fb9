// English and Simplified Chinese. English text is its own key; zh holds the translations.
// The language comes from localStorage, else from the browser, and is switchable.
import { useEffect, useState } from "preact/hooks";
import { zhApproval } from "./zh-approval";
import { zhAudit } from "./zh-audit";
import { zhBackup } from "./zh-backup";
import { zhEvents } from "./zh-events";
import { zhForms } from "./zh-forms";
import { zhIntegration } from "./zh-integration";
import { zhBase } from "./zh";
import { zhDesigner } from "./zh-designer";

// Each area keeps its own translations; tools/i18n-check.mjs refuses a text translated twice.
const zh: Record<string, string> = { ...zhBase, ...zhApproval, ...zhIntegration, ...zhEvents, ...zhAudit, ...zhBackup, ...zhForms, ...zhDesigner };

export type Lang = "en" | "zh-CN";
const LANG_KEY = "svc.console.lang";

function initial(): Lang {
  const saved = localStorage.getItem(LANG_KEY);
  if (saved === "en" || saved === "zh-CN") return saved;
  const nav = (navigator.languages?.[0] ?? navigator.language ?? "en").toLowerCase();
  return nav.startsWith("zh") ? "zh-CN" : "en";
}

let lang: Lang = initial();
const subs = new Set<(l: Lang) => void>();
document.documentElement.lang = lang;

export function getLang(): Lang {
  return lang;
}

export function setLang(l: Lang): void {
  lang = l;
  localStorage.setItem(LANG_KEY, l);
  document.documentElement.lang = l;
  subs.forEach((s) => s(l));
}

/** useLang re-renders the caller when the language changes. */
export function useLang(): Lang {
  const [l, set] = useState(lang);
  useEffect(() => {
    subs.add(set);
    return () => void subs.delete(set);
  }, []);
  return l;
}

/** t translates an English text; {name} placeholders are filled from args. */
export function t(text: string, args?: Record<string, string | number>): string {
  let s = lang === "zh-CN" ? (zh[text] ?? text) : text;
  if (args) for (const [k, v] of Object.entries(args)) s = s.split(`{${k}}`).join(String(v));
  return s;
}

/** tk marks a text translated later through a variable (a status, a label); it returns it unchanged. */
export const tk = (text: string): string => text;

const units = ["B", "KiB", "MiB", "GiB", "TiB"];

/** bytes renders a byte count with binary units. */
export function bytes(n: number | null | undefined): string {
  if (n == null || !isFinite(n)) return "–";
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** pct renders a percentage with one decimal. */
export function pct(n: number | null | undefined): string {
  return n == null || !isFinite(n) ? "–" : `${n.toFixed(1)} %`;
}

/** when renders an epoch-ms instant in the browser's zone and language. */
export function when(ms: number | null | undefined): string {
  if (!ms) return "–";
  // sv-SE writes the unambiguous YYYY-MM-DD HH:mm:ss the server's own strings use.
  return new Date(ms).toLocaleString(lang === "zh-CN" ? "zh-CN" : "sv-SE", { hour12: false });
}

/** at renders an instant the server sends as an RFC 3339 string, the same way as when. */
export function at(s: string | null | undefined): string {
  return s ? when(Date.parse(s)) : "–";
}

/** duration renders seconds as d h m. */
export function duration(sec: number | null | undefined): string {
  if (sec == null) return "–";
  const d = Math.floor(sec / 86400);
  const h = Math.floor((sec % 86400) / 3600);
  const m = Math.floor((sec % 3600) / 60);
  return d ? `${d}d ${h}h ${m}m` : h ? `${h}h ${m}m` : `${m}m ${Math.floor(sec % 60)}s`;
}

// Fails when a text passed to t("…") in src/ has no Simplified Chinese entry in src/zh.ts or
// src/zh-*.ts, when those hold an entry nothing uses, or when two of them hold the same entry.
// Texts passed through variables (statuses, route labels) are either listed in DYNAMIC below
// or marked where they are written with tk("…"), which returns its argument unchanged.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const DYNAMIC = [
  "Overview", "Users", "Files", "Cron", "Schema",
  "running", "succeeded", "failed", "missed", "skipped", "abandoned", "canceled",
  "uploaded", "claimed", "deleted",
  "Key", "Size", "Type", "Public", "State", "Uploaded", "Uploaded by", "Claimed", "Deleted",
];

const root = new URL("../src/", import.meta.url).pathname;
const files = [];
const walk = (d) => readdirSync(d).forEach((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : files.push(join(d, f))));
walk(root);
const used = new Set(DYNAMIC);
const isZh = (f) => /\/zh(-[a-z0-9-]+)?\.ts$/.test(f);
for (const f of files.filter((f) => /\.tsx?$/.test(f) && !isZh(f))) {
  for (const m of readFileSync(f, "utf8").matchAll(/\btk?\(\s*"((?:[^"\\]|\\.)*)"/g)) used.add(JSON.parse(`"${m[1]}"`));
}
const have = new Set();
const twice = [];
for (const f of files.filter(isZh)) {
  for (const m of readFileSync(f, "utf8").matchAll(/^\s*"((?:[^"\\]|\\.)*)":/gm)) {
    const k = JSON.parse(`"${m[1]}"`);
    if (have.has(k)) twice.push(k);
    have.add(k);
  }
}
if (twice.length) {
  console.error(`texts translated twice in zh*.ts:\n${twice.map((k) => `  ${JSON.stringify(k)}`).join("\n")}`);
  process.exit(1);
}
const missing = [...used].filter((k) => !have.has(k)).sort();
const unused = [...have].filter((k) => !used.has(k)).sort();
if (missing.length || unused.length) {
  if (missing.length) console.error(`zh.ts lacks ${missing.length} texts:\n${missing.map((k) => `  ${JSON.stringify(k)}: "",`).join("\n")}`);
  if (unused.length) console.error(`zh.ts holds unused texts:\n${unused.map((k) => `  ${JSON.stringify(k)}`).join("\n")}`);
  process.exit(1);
}
// Dates and times: every page writes them the one way i18n.ts's when and at do (YYYY-MM-DD
// HH:mm:ss), never in the browser's own locale format (US dates in en-US).
const localeDates = files
  .filter((f) => /\.tsx?$/.test(f) && !f.endsWith("/i18n.ts"))
  .flatMap((f) => (/\.toLocale(Date|Time)?String\(/.test(readFileSync(f, "utf8")) ? [f.slice(root.length)] : []));
if (localeDates.length) {
  console.error(`format instants with when() or at() from i18n.ts, not toLocaleString: ${localeDates.join(", ")}`);
  process.exit(1);
}
console.log(`i18n: ${used.size} texts, all translated`);

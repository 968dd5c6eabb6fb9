// Fails when a text passed to t("…") in src/ has no Simplified Chinese entry in src/zh.ts, or
// when zh.ts holds an entry nothing uses. Texts passed through variables (statuses, route
// labels) are listed in DYNAMIC below.
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
for (const f of files.filter((f) => /\.tsx?$/.test(f) && !f.endsWith("zh.ts"))) {
  for (const m of readFileSync(f, "utf8").matchAll(/\bt\(\s*"((?:[^"\\]|\\.)*)"/g)) used.add(JSON.parse(`"${m[1]}"`));
}
const zhSrc = readFileSync(join(root, "zh.ts"), "utf8");
const have = new Set([...zhSrc.matchAll(/^\s*"((?:[^"\\]|\\.)*)":/gm)].map((m) => JSON.parse(`"${m[1]}"`)));
const missing = [...used].filter((k) => !have.has(k)).sort();
const unused = [...have].filter((k) => !used.has(k)).sort();
if (missing.length || unused.length) {
  if (missing.length) console.error(`zh.ts lacks ${missing.length} texts:\n${missing.map((k) => `  ${JSON.stringify(k)}: "",`).join("\n")}`);
  if (unused.length) console.error(`zh.ts holds unused texts:\n${unused.map((k) => `  ${JSON.stringify(k)}`).join("\n")}`);
  process.exit(1);
}
console.log(`i18n: ${used.size} texts, all translated`);

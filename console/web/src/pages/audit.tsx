// Audit: the persisted trail of audited calls and security events (sys/audit) — a chart of
// calls and failures over time (plain SVG), a filterable list and a record's detail. The user
// filter can come from the address (#/audit?user=…), which the Users page links to.
import { useState } from "preact/hooks";
import { call } from "../api";
import type { AuditRecord, Stats } from "../api/ops.gen";

export type { AuditRecord };
import { t, tk, useLang, when } from "../i18n";
import { Card, Dialog, ErrorBox, ListStatus, Loading, PagedTable, useAsync } from "../ui";

interface Filter {
  user: string;
  resource: string;
  action: string;
  result: string;
  code: string;
  hours: string;
}

const SIZE = 15;
const RANGES = [
  { hours: "1", label: tk("Last hour") },
  { hours: "24", label: tk("Last 24 hours") },
  { hours: "168", label: tk("Last 7 days") },
  { hours: "720", label: tk("Last 30 days") },
];

/** hashUser is the user filter of the address, #/audit?user=…&user=…, set by the Users page's link. */
function hashUser(): string {
  const q = window.location.hash.split("?")[1] ?? "";
  return new URLSearchParams(q).getAll("user").join(", ");
}

/** auditLink is the Audit page filtered to one account: its id (calls) and user name (logins). */
export function auditLink(id: string, username: string): string {
  return `#/audit?${new URLSearchParams([["user", id], ["user", username]])}`;
}

/** params turns the filter into sys/audit's search params, the range ending now. */
function params(f: Filter, now: number): Record<string, unknown> {
  const p: Record<string, unknown> = { fromUnixMs: now - Number(f.hours) * 3600_000, toUnixMs: now };
  const users = f.user.split(",").map((u) => u.trim()).filter(Boolean);
  if (users.length) p.users = users;
  for (const k of ["resource", "action", "result"] as const) if (f[k]) p[k] = f[k];
  if (f.code.trim() !== "" && !Number.isNaN(Number(f.code))) p.code = Number(f.code);
  return p;
}

export function Audit() {
  useLang();
  const initial: Filter = { user: hashUser(), resource: "", action: "", result: "", code: "", hours: "24" };
  const [form, setForm] = useState(initial);
  const [filter, setFilter] = useState(initial);
  const [now, setNow] = useState(Date.now());
  const [page, setPage] = useState(1);
  const [detail, setDetail] = useState<string | null>(null);
  const list = useAsync(() => call("sys/audit/find_page", params(filter, now), { meta: { page, size: SIZE } }), [filter, now, page]);
  const stats = useAsync(() => call("sys/audit/stats", params(filter, now)), [filter, now]);
  const set = (k: keyof Filter) => (e: { currentTarget: { value: string } }) => setForm({ ...form, [k]: e.currentTarget.value });
  return (
    <div class="page">
      <h1>{t("Audit")}</h1>
      <Card
        title={t("Calls and failures")}
        actions={
          <button type="button" onClick={() => setNow(Date.now())}>
            {t("Refresh")}
          </button>
        }
      >
        <ListStatus list={stats} />
        {stats.data && <AuditChart stats={stats.data} />}
      </Card>
      <Card
        title={
          <form
            class="search"
            role="search"
            onSubmit={(e) => {
              e.preventDefault();
              setPage(1);
              setNow(Date.now());
              setFilter({ ...form, user: form.user.trim(), resource: form.resource.trim(), action: form.action.trim() });
            }}
          >
            <label>
              <span class="sr-only">{t("User")}</span>
              <input type="search" name="user" placeholder={t("User id or name (comma-separated)")} value={form.user} onInput={set("user")} />
            </label>
            <label>
              <span class="sr-only">{t("Resource")}</span>
              <input type="search" name="resource" placeholder={t("Resource")} value={form.resource} onInput={set("resource")} />
            </label>
            <label>
              <span class="sr-only">{t("Action")}</span>
              <input type="search" name="action" placeholder={t("Action")} value={form.action} onInput={set("action")} />
            </label>
            <label>
              <span class="sr-only">{t("Result")}</span>
              <select name="result" value={form.result} onChange={set("result")}>
                <option value="">{t("Any result")}</option>
                <option value="ok">{t("Succeeded")}</option>
                <option value="failed">{t("Failed")}</option>
              </select>
            </label>
            <label>
              <span class="sr-only">{t("Code")}</span>
              <input type="search" name="code" inputMode="numeric" placeholder={t("Code")} value={form.code} onInput={set("code")} size={6} />
            </label>
            <label>
              <span class="sr-only">{t("Time range")}</span>
              <select name="hours" value={form.hours} onChange={set("hours")}>
                {RANGES.map((r) => (
                  <option key={r.hours} value={r.hours}>
                    {t(r.label)}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit">{t("Filter")}</button>
          </form>
        }
      >
        <PagedTable
          list={list}
          page={page}
          size={SIZE}
          onPage={setPage}
          headings={[t("Time"), t("User"), t("Operation"), t("Result"), t("Client IP"), t("Duration")]}
          actions
          empty={t("No audit records match.")}
          row={(r) => (
            <tr key={r.id} data-record={r.id} data-user={r.userName}>
              <td>{when(Date.parse(r.at))}</td>
              <td title={r.userId}>{r.userName || r.userId || t("anonymous")}</td>
              <td class="mono">
                {r.resource} {r.action}
              </td>
              <td>
                <ResultBadge r={r} />
              </td>
              <td class="mono">{r.clientIp || "–"}</td>
              <td>{r.kind === "api" ? `${r.durationMs} ms` : "–"}</td>
              <td>
                <button type="button" onClick={() => setDetail(r.id)}>
                  {t("Details")}
                </button>
              </td>
            </tr>
          )}
        />
      </Card>
      {detail && <RecordDetail id={detail} onClose={() => setDetail(null)} />}
    </div>
  );
}

function ResultBadge({ r }: { r: AuditRecord }) {
  return (
    <span class={r.ok ? "badge ok" : "badge bad"} data-ok={r.ok}>
      {r.ok ? t("Succeeded") : r.code ? `${t("Failed")} ${r.code}` : t("Failed")}
    </span>
  );
}

function RecordDetail({ id, onClose }: { id: string; onClose: () => void }) {
  const rec = useAsync(() => call("sys/audit/get", { id }), [id]);
  const r = rec.data;
  return (
    <Dialog title={t("Audit record")} onClose={onClose} wide>
      <ErrorBox error={rec.error} />
      <Loading when={rec.loading && !r} />
      {r && (
        <dl class="meta">
          <dt>{t("Time")}</dt>
          <dd>{when(Date.parse(r.at))}</dd>
          <dt>{t("Kind")}</dt>
          <dd>{r.kind === "api" ? t("API call") : t("Security event")}</dd>
          <dt>{t("User")}</dt>
          <dd>
            {r.userName || "–"} <span class="mono muted">{r.userId}</span>
          </dd>
          <dt>{t("Operation")}</dt>
          <dd class="mono">
            {r.resource} {r.action} {r.version}
          </dd>
          <dt>{t("Result")}</dt>
          <dd>
            <ResultBadge r={r} /> {r.status ? <span class="muted">HTTP {r.status}</span> : null}
          </dd>
          <dt>{t("Duration")}</dt>
          <dd>{r.kind === "api" ? `${r.durationMs} ms` : "–"}</dd>
          <dt>{t("Client IP")}</dt>
          <dd class="mono">{r.clientIp || "–"}</dd>
          <dt>{t("User agent")}</dt>
          <dd class="mono">{r.userAgent || "–"}</dd>
          <dt>{t("Request id")}</dt>
          <dd class="mono">{r.requestId || "–"}</dd>
          <dt>{t("Node")}</dt>
          <dd class="mono">{r.nodeId}</dd>
          <dt>{t("Detail")}</dt>
          <dd>
            <pre class="sql">{JSON.stringify(r.detail, null, 2)}</pre>
          </dd>
        </dl>
      )}
    </Dialog>
  );
}

/** AuditChart draws calls (bars) and failures (red bars in front) per bucket, as SVG. */
export function AuditChart({ stats }: { stats: Stats }) {
  const W = 720;
  const H = 160;
  const pad = { l: 40, r: 8, t: 8, b: 22 };
  const n = Math.max(1, Math.ceil((stats.toUnixMs - stats.fromUnixMs) / stats.bucketMs));
  const first = stats.fromUnixMs - (stats.fromUnixMs % stats.bucketMs);
  const top = Math.max(1, ...stats.buckets.map((b) => b.calls));
  const bw = (W - pad.l - pad.r) / (n + 1);
  const x = (start: number) => pad.l + ((start - first) / stats.bucketMs) * bw;
  const y = (v: number) => pad.t + (H - pad.t - pad.b) * (1 - v / top);
  const total = stats.buckets.reduce((a, b) => a + b.calls, 0);
  const failed = stats.buckets.reduce((a, b) => a + b.failures, 0);
  return (
    <figure class="audit-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={t("{calls} calls, {failures} failed", { calls: total, failures: failed })}>
        <line x1={pad.l} x2={W - pad.r} y1={y(0)} y2={y(0)} stroke="#c9d0da" />
        <line x1={pad.l} x2={W - pad.r} y1={y(top)} y2={y(top)} stroke="#e3e7ed" stroke-dasharray="3 3" />
        <text x={pad.l - 6} y={y(top) + 4} text-anchor="end" font-size="11" fill="#5b6573">
          {top}
        </text>
        <text x={pad.l - 6} y={y(0) + 4} text-anchor="end" font-size="11" fill="#5b6573">
          0
        </text>
        {stats.buckets.map((b) => (
          <g key={b.startUnixMs} data-bucket={b.startUnixMs}>
            <rect x={x(b.startUnixMs)} y={y(b.calls)} width={Math.max(1, bw - 1)} height={y(0) - y(b.calls)} fill="#3b82c4">
              <title>{`${when(b.startUnixMs)}: ${t("{calls} calls, {failures} failed", { calls: b.calls, failures: b.failures })}`}</title>
            </rect>
            {b.failures > 0 && <rect x={x(b.startUnixMs)} y={y(b.failures)} width={Math.max(1, bw - 1)} height={y(0) - y(b.failures)} fill="#d2453d" />}
          </g>
        ))}
        <text x={pad.l} y={H - 6} font-size="11" fill="#5b6573">
          {when(stats.fromUnixMs)}
        </text>
        <text x={W - pad.r} y={H - 6} font-size="11" fill="#5b6573" text-anchor="end">
          {when(stats.toUnixMs)}
        </text>
      </svg>
      <figcaption class="legend">
        <span class="key calls" /> {t("Calls")} {total} <span class="key failures" /> {t("Failures")} {failed}
      </figcaption>
    </figure>
  );
}

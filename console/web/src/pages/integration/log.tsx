// The invocation log (integration/log): filters, the list with paging, one row's detail with
// its masked captures and wire trace, and charts of calls, failures and latency per system and
// contract over time, counted from the newest rows of the filter.
import { useMemo, useState } from "preact/hooks";
import { Chart } from "../../chart";
import { t, useLang } from "../../i18n";
import { Card, Dialog, ErrorBox, PagedTable, Table, useAsync } from "../../ui";
import { itg, pretty, type Exchange, type LogRow } from "./api";
import { DefSelect, useNames } from "./adapters";
import { Trace } from "./bench";
import { Mono } from "./crud";

const SIZE = 15;
/** CHART_ROWS rows at most feed the charts (find_page's largest page). */
const CHART_ROWS = 1000;
const KINDS = ["input_invalid", "output_invalid", "upstream", "transport", "timeout", "canceled", "script", "config", "auth", "handler"];
const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#a16207", "#0f766e"];
/** MAX_SERIES pairs get their own series; the rest are summed into "other". */
const MAX_SERIES = 5;

/** rowTime reads a log row's createdAt (the server's "YYYY-MM-DD HH:mm:ss", null for the zero
 * time) as epoch ms, NaN when there is none. */
const rowTime = (r: LogRow) => (r.createdAt ? new Date(r.createdAt.replace(" ", "T")).getTime() : NaN);
const pairOf = (r: LogRow) => `${r.systemCode} / ${r.contractCode || "–"}`;

interface Bucketed {
  pairs: string[];
  x: number[];
  calls: (number | null)[][];
  failures: (number | null)[][];
  latency: (number | null)[][];
  summary: { pair: string; calls: number; failures: number; avg: number; max: number }[];
}

/** bucket groups rows per (system, contract) into about 30 time buckets. */
export function bucket(rows: LogRow[], other: string): Bucketed {
  const byPair = new Map<string, LogRow[]>();
  for (const r of rows) byPair.set(pairOf(r), [...(byPair.get(pairOf(r)) ?? []), r]);
  const summary = [...byPair].map(([pair, rs]) => ({
    pair,
    calls: rs.length,
    failures: rs.filter((r) => r.failureKind).length,
    avg: Math.round(rs.reduce((a, r) => a + r.durationMs, 0) / rs.length),
    max: Math.max(...rs.map((r) => r.durationMs)),
  }));
  summary.sort((a, b) => b.calls - a.calls);
  const top = summary.slice(0, MAX_SERIES).map((s) => s.pair);
  const pairs = summary.length > MAX_SERIES ? [...top, other] : top;
  const times = rows.map(rowTime);
  const min = Math.min(...times);
  const max = Math.max(...times);
  const step = Math.max(60_000, Math.ceil((max - min + 1) / 30 / 60_000) * 60_000);
  const start = Math.floor(min / step) * step;
  const n = rows.length ? Math.floor((max - start) / step) + 1 : 0;
  const x = Array.from({ length: n }, (_, i) => (start + i * step) / 1000);
  const grid = () => pairs.map(() => Array.from({ length: n }, () => 0));
  const calls = grid();
  const failures = grid();
  const total = grid();
  rows.forEach((r, k) => {
    const p = top.includes(pairOf(r)) ? top.indexOf(pairOf(r)) : pairs.length - 1;
    const b = Math.floor((times[k]! - start) / step);
    calls[p]![b]!++;
    if (r.failureKind) failures[p]![b]!++;
    total[p]![b]! += r.durationMs;
  });
  const latency = total.map((row, p) => row.map((v, b) => (calls[p]![b] ? Math.round(v / calls[p]![b]!) : null)));
  return { pairs, x, calls, failures, latency, summary };
}

export function Log() {
  useLang();
  const names = useNames();
  const [draft, setDraft] = useState({ systemCode: "", contractCode: "", direction: "", failureKind: "", requestId: "" });
  const [filter, setFilter] = useState(draft);
  const [page, setPage] = useState(1);
  const [detail, setDetail] = useState<LogRow | null>(null);
  const params = Object.fromEntries(Object.entries(filter).filter(([, v]) => v));
  const list = useAsync(() => itg("log/find_page", params, { page, size: SIZE }), [filter, page]);
  const sample = useAsync(() => itg("log/find_page", params, { page: 1, size: CHART_ROWS }), [filter]);
  const b = useMemo(() => bucket(sample.data?.items ?? [], t("other")), [sample.data]);
  // A line needs two buckets: with fewer the counts are drawn as dots.
  const series = b.pairs.map((p, i) => ({ label: p, color: COLORS[i % COLORS.length]!, points: b.x.length < 2 }));
  const set = (k: keyof typeof draft) => (v: string) => setDraft({ ...draft, [k]: v });
  return (
    <>
      <Card
        title={
          <form
            class="search"
            role="search"
            onSubmit={(e) => {
              e.preventDefault();
              setPage(1);
              setFilter({ ...draft, requestId: draft.requestId.trim() });
            }}
          >
            <DefSelect label={t("System")} byCode items={names.systems} value={draft.systemCode} onChange={set("systemCode")} any={t("Every system")} />
            <DefSelect label={t("Contract")} byCode items={names.contracts} value={draft.contractCode} onChange={set("contractCode")} any={t("Every contract")} />
            <select aria-label={t("Direction")} value={draft.direction} onChange={(e) => set("direction")(e.currentTarget.value)}>
              <option value="">{t("Both directions")}</option>
              <option value="outbound">{t("outbound")}</option>
              <option value="inbound">{t("inbound")}</option>
            </select>
            <select aria-label={t("Failure kind")} value={draft.failureKind} onChange={(e) => set("failureKind")(e.currentTarget.value)}>
              <option value="">{t("Every outcome")}</option>
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
            <label>
              <span class="sr-only">{t("Request id")}</span>
              <input type="search" placeholder={t("Request id")} value={draft.requestId} onInput={(e) => set("requestId")(e.currentTarget.value)} />
            </label>
            <button type="submit">{t("Filter")}</button>
          </form>
        }
      >
        <p class="muted small">
          {t("Charts count the newest {n} logged invocations of the filter; svc.integration.log.mode decides what is logged (errors: failures only).", {
            n: CHART_ROWS,
          })}
        </p>
        <ErrorBox error={sample.error ?? names.error} />
        <div class="grid charts itg-charts">
          <Chart key={`c${b.pairs.join()}${b.x.length < 2}`} title={t("Calls per system / contract")} series={series} data={[b.x, ...b.calls]} height={180} />
          <Chart key={`f${b.pairs.join()}${b.x.length < 2}`} title={t("Failures per system / contract")} series={series} data={[b.x, ...b.failures]} height={180} />
          <Chart key={`l${b.pairs.join()}${b.x.length < 2}`} title={t("Average latency (ms) per system / contract")} series={series} data={[b.x, ...b.latency]} height={180} yUnit=" ms" />
        </div>
        {!!b.summary.length && (
          <Table headings={[t("System / contract"), t("Calls"), t("Failures"), t("Average latency"), t("Longest")]}>
            {b.summary.map((s) => (
              <tr key={s.pair} data-pair={s.pair}>
                <td>
                  <Mono>{s.pair}</Mono>
                </td>
                <td>{s.calls}</td>
                <td class={s.failures ? "warn" : undefined}>{s.failures}</td>
                <td>{s.avg} ms</td>
                <td>{s.max} ms</td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      <Card title={t("Invocations")}>
        <PagedTable
          list={list}
          page={page}
          size={SIZE}
          onPage={setPage}
          headings={[t("Time"), t("System"), t("Contract"), t("Direction"), t("Outcome"), t("Duration"), t("Request id")]}
          actions
          empty={t("No invocations match.")}
          row={(r) => (
            <tr key={r.id} data-log={r.id}>
              <td>{r.createdAt}</td>
              <td class="mono">{r.systemCode}</td>
              <td class="mono">{r.contractCode || "–"}</td>
              <td>{t(r.direction)}</td>
              <td>
                <span class={r.failureKind ? "badge bad" : "badge ok"}>{r.failureKind || t("succeeded")}</span>
              </td>
              <td>{r.durationMs} ms</td>
              <td class="mono clip">{r.requestId || "–"}</td>
              <td>
                <button type="button" onClick={() => setDetail(r)}>
                  {t("Details")}
                </button>
              </td>
            </tr>
          )}
        />
      </Card>
      {detail && <LogDetail row={detail} onClose={() => setDetail(null)} />}
    </>
  );
}

function LogDetail({ row: r, onClose }: { row: LogRow; onClose: () => void }) {
  const trace = Array.isArray(r.httpTrace) ? (r.httpTrace as Exchange[]) : [];
  return (
    <Dialog title={t("Invocation")} onClose={onClose} wide>
      <div class="bench-result">
        <dl class="meta">
          <dt>{t("Time")}</dt>
          <dd>{r.createdAt}</dd>
          <dt>{t("System")}</dt>
          <dd class="mono">{r.systemCode}</dd>
          <dt>{t("Contract")}</dt>
          <dd class="mono">{r.contractCode || "–"}</dd>
          <dt>{t("Direction")}</dt>
          <dd>{t(r.direction)}</dd>
          <dt>{t("Outcome")}</dt>
          <dd>
            <span class={r.failureKind ? "badge bad" : "badge ok"}>{r.failureKind || t("succeeded")}</span>
          </dd>
          <dt>{t("Duration")}</dt>
          <dd>{r.durationMs} ms</dd>
          <dt>{t("Request id")}</dt>
          <dd class="mono">{r.requestId || "–"}</dd>
          <dt>{t("By")}</dt>
          <dd class="mono">{r.createdBy || "–"}</dd>
        </dl>
        {r.error && <pre class="err-text">{r.error}</pre>}
        <div class="cols">
          <div>
            <h3>{t("Input")}</h3>
            <pre class="json">{pretty(r.input) || "null"}</pre>
          </div>
          <div>
            <h3>{t("Output")}</h3>
            <pre class="json">{pretty(r.output) || "null"}</pre>
          </div>
        </div>
        <Trace trace={trace} />
      </div>
    </Dialog>
  );
}

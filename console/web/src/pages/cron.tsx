// Cron: schedules (list, create and edit every trigger kind with a preview of the next fires,
// pause, resume, trigger now, delete) and runs (filters, detail, a chart of durations and
// outcomes over time).
import { useEffect, useMemo, useState } from "preact/hooks";
import { call, type Params } from "../api";
import type { ScheduleJSON as Schedule } from "../api/ops.gen";
import { Chart } from "../chart";
import { t, useLang, when } from "../i18n";
import { P } from "../perms";
import { can } from "../session";
import { Card, Dialog, ErrorBox, Field, Loading, PagedTable, useAction, useAsync, type Submit } from "../ui";

type Kind = "cron" | "interval" | "once";
const STATUSES = ["running", "succeeded", "failed", "missed", "skipped", "abandoned", "canceled"];
const SIZE = 15;

function trigger(s: Schedule): string {
  if (s.kind === "cron") return `${s.expr}${s.timezone && s.timezone !== "UTC" ? ` (${s.timezone})` : ""}`;
  if (s.kind === "interval") return t("every {n} s", { n: s.everyMs / 1000 });
  return t("once at {time}", { time: when(s.fireAtUnixMs) });
}

export function Cron() {
  useLang();
  const [tab, setTab] = useState<"schedules" | "runs">(can(P.cronQuery) ? "schedules" : "runs");
  const [runFilter, setRunFilter] = useState("");
  return (
    <div class="page">
      <h1>{t("Cron")}</h1>
      <div class="tabs" role="tablist">
        {can(P.cronQuery) && (
          <button type="button" role="tab" aria-selected={tab === "schedules"} onClick={() => setTab("schedules")}>
            {t("Schedules")}
          </button>
        )}
        {can(P.cronRuns) && (
          <button type="button" role="tab" aria-selected={tab === "runs"} onClick={() => setTab("runs")}>
            {t("Runs")}
          </button>
        )}
      </div>
      {tab === "schedules" ? (
        <Schedules
          onRuns={(name) => {
            setRunFilter(name);
            setTab("runs");
          }}
        />
      ) : (
        <Runs initialSchedule={runFilter} />
      )}
    </div>
  );
}

function Schedules({ onRuns }: { onRuns: (name: string) => void }) {
  const [name, setName] = useState("");
  const [query, setQuery] = useState("");
  const [page, setPage] = useState(1);
  const [edit, setEdit] = useState<Schedule | "new" | null>(null);
  const act = useAction();
  const list = useAsync(
    () => call("sys/cron/schedule/find_page", query ? { name: query } : {}, { meta: { page, size: SIZE } }),
    [query, page],
  );
  const manage = can(P.cronManage);
  const op = (action: "pause" | "resume" | "trigger_now" | "delete", s: Schedule, done: string) =>
    act.run(async () => {
      await call(`sys/cron/schedule/${action}`, { name: s.name });
      list.reload();
    }, done);
  return (
    <Card
      title={
        <form
          class="search"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            setPage(1);
            setQuery(name.trim());
          }}
        >
          <label>
            <span class="sr-only">{t("Search schedules")}</span>
            <input type="search" placeholder={t("Search by name")} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit">{t("Search")}</button>
        </form>
      }
      actions={
        manage && (
          <button type="button" class="primary" onClick={() => setEdit("new")}>
            {t("New schedule")}
          </button>
        )
      }
    >
      <PagedTable
        list={list}
        act={act}
        page={page}
        size={SIZE}
        onPage={setPage}
        headings={[t("Name"), t("Job"), t("Trigger"), t("State"), t("Next fire"), t("Last fire")]}
        actions
        empty={t("No schedules.")}
        row={(s) => (
          <tr key={s.id} data-schedule={s.name}>
            <td class="mono">{s.name}</td>
            <td class="mono">{s.jobName}</td>
            <td class="mono">{trigger(s)}</td>
            <td>
              <span class={s.isEnabled ? "badge ok" : "badge"}>{s.isEnabled ? t("active") : t("paused")}</span>
            </td>
            <td>{s.isEnabled ? when(s.nextFireAtUnixMs) : "–"}</td>
            <td>{when(s.lastFireAtUnixMs)}</td>
            <td class="row-actions">
              {manage && (
                <>
                  <button type="button" onClick={() => setEdit(s)}>
                    {t("Edit")}
                  </button>
                  {s.isEnabled ? (
                    <button type="button" onClick={() => void op("pause", s, t("{name} paused.", { name: s.name }))}>
                      {t("Pause")}
                    </button>
                  ) : (
                    <button type="button" onClick={() => void op("resume", s, t("{name} resumed.", { name: s.name }))}>
                      {t("Resume")}
                    </button>
                  )}
                  <button type="button" onClick={() => void op("trigger_now", s, t("{name} triggered.", { name: s.name }))}>
                    {t("Trigger now")}
                  </button>
                  <button
                    type="button"
                    class="danger"
                    onClick={() => {
                      if (window.confirm(t("Delete the schedule {name}? Its runs stay in the journal.", { name: s.name })))
                        void op("delete", s, t("{name} deleted.", { name: s.name }));
                    }}
                  >
                    {t("Delete")}
                  </button>
                </>
              )}
              {can(P.cronRuns) && (
                <button type="button" onClick={() => onRuns(s.name)}>
                  {t("Runs")}
                </button>
              )}
            </td>
          </tr>
        )}
      />
      {edit && (
        <Editor
          schedule={edit === "new" ? null : edit}
          onClose={(saved) => {
            setEdit(null);
            if (saved) list.reload();
          }}
        />
      )}
    </Card>
  );
}

/** local renders epoch ms as a datetime-local value; parse goes back. */
const local = (ms?: number) => {
  if (!ms) return "";
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 16);
};
const parse = (v: string) => (v ? new Date(v).getTime() : undefined);

/** JobInfo is one job of describe_jobs: its name and what it says of its params. */
interface JobInfo {
  name: string;
  paramsRequired: boolean;
  paramsSchema?: unknown;
  paramsExample?: unknown;
}

/** ParamsHelp shows the chosen job's params schema and example, and puts the example in the box. */
function ParamsHelp({ job, onUse }: { job: JobInfo; onUse: (example: string) => void }) {
  if (job.paramsSchema === undefined && job.paramsExample === undefined) {
    return <p class="muted params-help">{t("This job does not describe its params.")}</p>;
  }
  const example = job.paramsExample === undefined ? "" : JSON.stringify(job.paramsExample, null, 2);
  return (
    <section class="params-help" aria-label={t("Params of {job}", { job: job.name })}>
      {example && (
        <>
          <h4>
            {t("Example")}{" "}
            <button type="button" onClick={() => onUse(example)}>
              {t("Use this example")}
            </button>
          </h4>
          <pre class="mono">{example}</pre>
        </>
      )}
      {job.paramsSchema !== undefined && (
        <details>
          <summary>{t("Params schema (JSON Schema)")}</summary>
          <pre class="mono">{JSON.stringify(job.paramsSchema, null, 2)}</pre>
        </details>
      )}
    </section>
  );
}

function Editor({ schedule, onClose }: { schedule: Schedule | null; onClose: (saved: boolean) => void }) {
  const s = schedule;
  const [name, setName] = useState(s?.name ?? "");
  const [jobName, setJobName] = useState(s?.jobName ?? "");
  const [kind, setKind] = useState<Kind>((s?.kind as Kind | undefined) ?? "cron");
  const [expr, setExpr] = useState(s?.expr || "*/5 * * * *");
  const [timezone, setTimezone] = useState(s?.timezone && s.timezone !== "UTC" ? s.timezone : "");
  const [everySec, setEverySec] = useState(String(s?.everyMs ? s.everyMs / 1000 : 60));
  const [at, setAt] = useState(local(s?.fireAtUnixMs ?? Date.now() + 3600_000));
  const [startsAt, setStartsAt] = useState(local(s?.startsAtUnixMs));
  const [endsAt, setEndsAt] = useState(local(s?.endsAtUnixMs));
  const [params, setParams] = useState(s?.params === undefined ? "" : JSON.stringify(s.params, null, 2));
  const [misfire, setMisfire] = useState(s?.misfirePolicy ?? "fire_now");
  const [concurrency, setConcurrency] = useState(s?.concurrencyPolicy ?? "forbid");
  const [recover, setRecover] = useState(s?.recover ?? false);
  const [timeoutSec, setTimeoutSec] = useState(String((s?.timeoutMs ?? 0) / 1000));
  const [enabled, setEnabled] = useState(s?.isEnabled ?? true);
  const [preview, setPreview] = useState<{ fires?: number[]; error?: unknown }>({});
  const jobs = useAsync(() => call("sys/cron/schedule/describe_jobs"), []);
  const job = jobs.data?.find((j) => j.name === jobName);
  const act = useAction();

  const trig = () =>
    kind === "cron"
      ? { kind, expr, ...(timezone ? { timezone } : {}) }
      : kind === "interval"
        ? { kind, everyMs: Math.round(Number(everySec) * 1000) }
        : { kind, atUnixMs: parse(at) };
  const windowParams = () => ({
    ...(startsAt ? { startsAtUnixMs: parse(startsAt) } : {}),
    ...(endsAt ? { endsAtUnixMs: parse(endsAt) } : {}),
  });

  useEffect(() => {
    const id = setTimeout(() => {
      call("sys/cron/schedule/preview_fires", { trigger: trig(), ...windowParams() }).then(
        (r) => setPreview({ fires: r.nextFiresUnixMs }),
        (error) => setPreview({ error }),
      );
    }, 400);
    return () => clearTimeout(id);
  }, [kind, expr, timezone, everySec, at, startsAt, endsAt]);

  const submit = async (e: Submit) => {
    e.preventDefault();
    let p: unknown;
    if (params.trim()) {
      try {
        p = JSON.parse(params);
      } catch {
        act.setError(new Error(t("Params must be JSON.")));
        return;
      }
    }
    const body: Params<"sys/cron/schedule/create"> = {
      name: s ? s.name : name,
      ...(s && name !== s.name ? { newName: name } : {}),
      jobName,
      trigger: trig(),
      ...windowParams(),
      ...(p !== undefined ? { params: p } : {}),
      misfirePolicy: misfire,
      concurrencyPolicy: concurrency,
      recover,
      timeoutMs: Math.round(Number(timeoutSec || 0) * 1000),
      enabled,
    };
    if (await act.run(() => call(s ? "sys/cron/schedule/update" : "sys/cron/schedule/create", body))) onClose(true);
  };

  return (
    <Dialog title={s ? t("Edit {name}", { name: s.name }) : t("New schedule")} onClose={() => onClose(false)} wide>
      <form onSubmit={submit} class="editor">
        <div class="cols">
          <div>
            <Field label={t("Name")}>
              <input name="name" required maxLength={128} value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </Field>
            <Field label={t("Job")}>
              <select name="jobName" required value={jobName} onChange={(e) => setJobName(e.currentTarget.value)}>
                <option value="">{t("Choose a job")}</option>
                {(jobs.data ?? []).map((j) => (
                  <option key={j.name} value={j.name}>
                    {j.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field label={t("Trigger")}>
              <select name="kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
                <option value="cron">{t("cron expression")}</option>
                <option value="interval">{t("fixed interval")}</option>
                <option value="once">{t("once")}</option>
              </select>
            </Field>
            {kind === "cron" && (
              <>
                <Field label={t("Expression")} hint={t("5 or 6 fields (seconds first), or @daily, @every 90m")}>
                  <input name="expr" class="mono" required value={expr} onInput={(e) => setExpr(e.currentTarget.value)} />
                </Field>
                <Field label={t("Time zone")} hint={t("IANA name, e.g. Asia/Shanghai; empty is UTC")}>
                  <input name="timezone" value={timezone} onInput={(e) => setTimezone(e.currentTarget.value.trim())} />
                </Field>
              </>
            )}
            {kind === "interval" && (
              <Field label={t("Every (seconds)")}>
                <input name="every" type="number" min="1" step="any" required value={everySec} onInput={(e) => setEverySec(e.currentTarget.value)} />
              </Field>
            )}
            {kind === "once" && (
              <Field label={t("At")}>
                <input name="at" type="datetime-local" required value={at} onInput={(e) => setAt(e.currentTarget.value)} />
              </Field>
            )}
            <Field label={t("Starts at (optional)")}>
              <input name="startsAt" type="datetime-local" value={startsAt} onInput={(e) => setStartsAt(e.currentTarget.value)} />
            </Field>
            <Field label={t("Ends at (optional)")}>
              <input name="endsAt" type="datetime-local" value={endsAt} onInput={(e) => setEndsAt(e.currentTarget.value)} />
            </Field>
          </div>
          <div>
            <section class="preview" aria-live="polite">
              <h3>{t("Next fires")}</h3>
              {preview.error ? (
                <ErrorBox error={preview.error} />
              ) : preview.fires ? (
                preview.fires.length ? (
                  <ol>
                    {preview.fires.map((f) => (
                      <li key={f}>{when(f)}</li>
                    ))}
                  </ol>
                ) : (
                  <p class="muted">{t("Never fires.")}</p>
                )
              ) : (
                <p class="muted">{t("Loading…")}</p>
              )}
            </section>
            <Field label={job?.paramsRequired ? t("Params (JSON)") : t("Params (JSON, optional)")}>
              <textarea
                name="params"
                class="mono"
                rows={4}
                required={job?.paramsRequired}
                value={params}
                onInput={(e) => setParams(e.currentTarget.value)}
              />
            </Field>
            {job && <ParamsHelp job={job} onUse={(example) => setParams(example)} />}
            <Field label={t("Missed fires")}>
              <select value={misfire} onChange={(e) => setMisfire(e.currentTarget.value as "fire_now" | "skip")}>
                <option value="fire_now">{t("run once to catch up")}</option>
                <option value="skip">{t("skip")}</option>
              </select>
            </Field>
            <Field label={t("Overlapping runs")}>
              <select value={concurrency} onChange={(e) => setConcurrency(e.currentTarget.value as "forbid" | "allow")}>
                <option value="forbid">{t("forbid")}</option>
                <option value="allow">{t("allow")}</option>
              </select>
            </Field>
            <Field label={t("Timeout (seconds, 0 = server default)")}>
              <input type="number" min="0" step="any" value={timeoutSec} onInput={(e) => setTimeoutSec(e.currentTarget.value)} />
            </Field>
            <label class="check">
              <input type="checkbox" checked={recover} onChange={(e) => setRecover(e.currentTarget.checked)} />
              <span>{t("Run again after a crash (recover)")}</span>
            </label>
            <label class="check">
              <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
              <span>{t("Enabled")}</span>
            </label>
          </div>
        </div>
        <ErrorBox error={act.error ?? jobs.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy}>
            {s ? t("Save") : t("Create")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

const STATUS_COLORS: Record<string, string> = {
  succeeded: "#16a34a",
  failed: "#dc2626",
  running: "#2563eb",
  missed: "#a16207",
  skipped: "#6b7280",
  abandoned: "#9333ea",
  canceled: "#0f766e",
};

function Runs({ initialSchedule }: { initialSchedule: string }) {
  const [schedule, setSchedule] = useState(initialSchedule);
  const [status, setStatus] = useState("");
  const [hours, setHours] = useState("24");
  const [filter, setFilter] = useState({ schedule: initialSchedule, status: "", hours: "24" });
  const [page, setPage] = useState(1);
  const [detail, setDetail] = useState<string | null>(null);
  const search = () => {
    const p: Record<string, unknown> = {};
    if (filter.schedule) p.scheduleName = filter.schedule;
    if (filter.status) p.status = filter.status;
    if (filter.hours) p.scheduledAtFromUnixMs = Date.now() - Number(filter.hours) * 3600_000;
    return p;
  };
  const list = useAsync(() => call("sys/cron/run/find_page", search(), { meta: { page, size: SIZE } }), [filter, page]);
  const chartRuns = useAsync(() => call("sys/cron/run/find_page", search(), { meta: { page: 1, size: 500 } }), [filter]);
  const series = useMemo(() => STATUSES.map((s) => ({ label: t(s), color: STATUS_COLORS[s] ?? "#333", points: true })), [t("succeeded")]);
  const data = useMemo(() => {
    const runs = [...(chartRuns.data?.items ?? [])].sort((a, b) => a.scheduledAtUnixMs - b.scheduledAtUnixMs);
    const cols: (number | null)[][] = [runs.map((r) => r.scheduledAtUnixMs / 1000)];
    for (const s of STATUSES) cols.push(runs.map((r) => (r.status === s ? r.durationMs : null)));
    return cols;
  }, [chartRuns.data]);
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
              setFilter({ schedule: schedule.trim(), status, hours });
            }}
          >
            <label>
              <span class="sr-only">{t("Schedule")}</span>
              <input type="search" placeholder={t("Schedule name")} value={schedule} onInput={(e) => setSchedule(e.currentTarget.value)} />
            </label>
            <select aria-label={t("Outcome")} value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
                <option value="">{t("Every outcome")}</option>
                {STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {t(s)}
                  </option>
                ))}
            </select>
            <select aria-label={t("Period")} value={hours} onChange={(e) => setHours(e.currentTarget.value)}>
                <option value="1">{t("last hour")}</option>
                <option value="24">{t("last 24 hours")}</option>
                <option value="168">{t("last 7 days")}</option>
                <option value="">{t("all time")}</option>
            </select>
            <button type="submit">{t("Filter")}</button>
          </form>
        }
      >
        <Chart title={t("Run durations (ms) by outcome")} series={series} data={data} height={200} yUnit=" ms" />
        <ErrorBox error={chartRuns.error} />
      </Card>
      <Card title={t("Runs")}>
        <PagedTable
          list={list}
          page={page}
          size={SIZE}
          onPage={setPage}
          headings={[t("Schedule"), t("Job"), t("Scheduled for"), t("Outcome"), t("Duration"), t("Node")]}
          actions
          empty={t("No runs match.")}
          row={(r) => (
            <tr key={r.id} data-run={r.id}>
              <td class="mono">{r.scheduleName}</td>
              <td class="mono">{r.jobName}</td>
              <td>{when(r.scheduledAtUnixMs)}</td>
              <td>
                <span class={`badge ${r.status === "succeeded" ? "ok" : r.status === "failed" ? "bad" : ""}`}>{t(r.status)}</span>
              </td>
              <td>{r.durationMs} ms</td>
              <td class="mono">{r.nodeId || "–"}</td>
              <td>
                <button type="button" onClick={() => setDetail(r.id)}>
                  {t("Details")}
                </button>
              </td>
            </tr>
          )}
        />
      </Card>
      {detail && <RunDetail id={detail} onClose={() => setDetail(null)} />}
    </>
  );
}

function RunDetail({ id, onClose }: { id: string; onClose: () => void }) {
  const run = useAsync(() => call("sys/cron/run/find_one", { id }), [id]);
  const r = run.data;
  return (
    <Dialog title={t("Run")} onClose={onClose}>
      <ErrorBox error={run.error} />
      <Loading when={run.loading} />
      {r && (
        <dl class="meta">
          <dt>{t("Run id")}</dt>
          <dd class="mono">{r.id}</dd>
          <dt>{t("Schedule")}</dt>
          <dd class="mono">{r.scheduleName}</dd>
          <dt>{t("Job")}</dt>
          <dd class="mono">{r.jobName}</dd>
          <dt>{t("Outcome")}</dt>
          <dd>{t(r.status)}</dd>
          <dt>{t("Scheduled for")}</dt>
          <dd>{when(r.scheduledAtUnixMs)}</dd>
          <dt>{t("Claimed")}</dt>
          <dd>{when(r.claimedAtUnixMs)}</dd>
          <dt>{t("Started")}</dt>
          <dd>{when(r.startedAtUnixMs)}</dd>
          <dt>{t("Finished")}</dt>
          <dd>{when(r.finishedAtUnixMs)}</dd>
          <dt>{t("Duration")}</dt>
          <dd>{r.durationMs} ms</dd>
          <dt>{t("Node")}</dt>
          <dd class="mono">{r.nodeId || "–"}</dd>
          {!!r.missedCount && (
            <>
              <dt>{t("Missed fires")}</dt>
              <dd>{r.missedCount}</dd>
            </>
          )}
          {r.error && (
            <>
              <dt>{t("Error")}</dt>
              <dd>
                <pre class="err-text">{r.error}</pre>
              </dd>
            </>
          )}
        </dl>
      )}
    </Dialog>
  );
}

// Overview: build and host facts, live charts (CPU, memory, disk, load, the process) from
// sys/monitor get_overview, readiness from get_readiness, event streams and integration
// statistics when the server has them. get_overview is polled every 6 s: sys/monitor allows
// 60 calls per action in 5 minutes, so this leaves room for a reload.
import { useEffect, useMemo, useState } from "preact/hooks";
import { ApiError, call } from "../api";
import type { Overview as OverviewData, Readiness } from "../api/ops.gen";

/** Ready is a readiness answer; unreachable marks one the console could not get. */
type Ready = Readiness & { unreachable?: boolean };
import { Chart } from "../chart";
import { bytes, duration, pct, t, useLang, when } from "../i18n";
import { Card, EmptyRow, ErrorBox, Table, useAsync, useInterval } from "../ui";


/**
 * recorded says whether the build recorded a value: the server sends "unknown" for what neither
 * the link-time flags nor Go's build info hold (`go run`, `go build -buildvcs=false`).
 */
const recorded = (v: string | undefined): v is string => !!v && v !== "unknown";

/** fact shows a build value, or "development build" where nothing was recorded (issue #48). */
const fact = (v: string | undefined): string => (recorded(v) ? v : t("development build"));

const POLL_MS = 6000;
const KEEP = 120; // points: 12 minutes at 6 s

type Hist = (number | null)[][];
const empty = (n: number): Hist => Array.from({ length: n + 1 }, () => []);

function push(h: Hist, x: number, ys: (number | null | undefined)[]): Hist {
  return h.map((col, i) => {
    const next = [...col, i === 0 ? x : (ys[i - 1] ?? null)];
    return next.length > KEEP ? next.slice(next.length - KEEP) : next;
  });
}

/**
 * readiness asks get_readiness (one check per data source and Redis); a server without that
 * operation (404/1200) is asked GET /readyz, which names only what fails.
 */
async function readiness(): Promise<Ready> {
  try {
    return await call("sys/monitor/get_readiness");
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== 1200) throw e;
    const r = (await (await fetch(new URL("/readyz", window.location.origin), { credentials: "omit" })).json()) as { status: string; failed?: string[] };
    return {
      ready: r.status === "ready",
      checks: (r.failed ?? []).map((name) => ({ name, kind: "", type: "", ready: false, latencyMs: 0 })),
    };
  }
}

export function Overview() {
  useLang();
  const [ov, setOv] = useState<OverviewData | null>(null);
  const [err, setErr] = useState<unknown>(null);
  const [cpu, setCpu] = useState<Hist>(() => empty(2));
  const [mem, setMem] = useState<Hist>(() => empty(2));
  const [load, setLoad] = useState<Hist>(() => empty(3));
  const [ready, setReady] = useState<Ready | null>(null);

  const [quietUntil, setQuietUntil] = useState(0);
  const poll = async () => {
    // After a rate-limit answer (1401) the charts wait a minute instead of hammering.
    if (Date.now() < quietUntil) return;
    try {
      const o = await call("sys/monitor/get_overview");
      const x = Date.now() / 1000;
      setOv(o);
      setErr(null);
      setCpu((h) => push(h, x, [o.cpu?.usagePercent, o.process?.cpuPercent]));
      setMem((h) => push(h, x, [o.memory?.usedPercent, o.disk?.usedPercent]));
      setLoad((h) => push(h, x, [o.load?.load1, o.load?.load5, o.load?.load15]));
    } catch (e) {
      setErr(e);
      if (e instanceof ApiError && e.code === 1401) setQuietUntil(Date.now() + 60_000);
    }
  };
  const pollReady = () => readiness().then(setReady, () => setReady({ ready: false, checks: [], unreachable: true }));
  useEffect(() => void pollReady(), []);
  useInterval(pollReady, 30_000);
  useEffect(() => void poll(), []);
  useInterval(poll, POLL_MS);

  const streams = useAsync(() => call("sys/monitor/get_event_streams"), []);
  const stats = useAsync(() => call("sys/monitor/get_integration_stats"), []);
  useInterval(() => {
    streams.reload();
    stats.reload();
  }, 30_000);

  const cpuSeries = useMemo(() => [{ label: t("Host CPU"), color: "#1f6feb" }, { label: t("Process CPU"), color: "#d97706" }], [t("Host CPU")]);
  const memSeries = useMemo(() => [{ label: t("Memory used"), color: "#7c3aed" }, { label: t("Disk used"), color: "#059669" }], [t("Memory used")]);
  const loadSeries = useMemo(
    () => [{ label: "1 min", color: "#dc2626" }, { label: "5 min", color: "#2563eb" }, { label: "15 min", color: "#16a34a" }],
    [],
  );
  const b = ov?.build;
  const h = ov?.host;
  return (
    <div class="page">
      <h1>{t("Overview")}</h1>
      <ErrorBox error={err} />
      <div class="grid facts">
        <Card title={t("Build")}>
          <dl>
            <dt>{t("Framework")}</dt>
            <dd>{b ? fact(b.frameworkVersion ?? b.vefVersion) : "–"}</dd>
            <dt>{t("Application")}</dt>
            <dd>{b ? fact(b.appVersion) : "–"}</dd>
            <dt>{t("Commit")}</dt>
            <dd class={recorded(b?.gitCommit) ? "mono" : ""}>
              {b ? (recorded(b.gitCommit) ? b.gitCommit.slice(0, 12) : fact(b.gitCommit)) : "–"}
              {b?.gitModified ? ` (${t("modified")})` : ""}
            </dd>
            <dt>{t("Built")}</dt>
            <dd>{b ? fact(b.buildTime) : "–"}</dd>
          </dl>
        </Card>
        <Card title={t("Host")}>
          <dl>
            <dt>{t("Host name")}</dt>
            <dd>{h?.hostname ?? "–"}</dd>
            <dt>{t("System")}</dt>
            <dd>{h ? `${h.platform || h.os} ${h.platformVersion} · ${h.kernelArch}` : "–"}</dd>
            <dt>{t("Up for")}</dt>
            <dd>{duration(h?.uptime)}</dd>
            <dt>{t("CPU cores")}</dt>
            <dd>{ov?.cpu ? `${ov.cpu.logicalCores} (${t("effective")} ${+ov.cpu.effectiveCores.toFixed(2)})` : "–"}</dd>
          </dl>
        </Card>
        <Card title={t("Now")}>
          <dl>
            <dt>{t("Memory")}</dt>
            <dd>{ov?.memory ? `${bytes(ov.memory.used)} / ${bytes(ov.memory.total)} (${pct(ov.memory.usedPercent)})` : "–"}</dd>
            <dt>{t("Disk")}</dt>
            <dd>{ov?.disk ? `${bytes(ov.disk.used)} / ${bytes(ov.disk.total)} (${pct(ov.disk.usedPercent)})` : "–"}</dd>
            <dt>{t("Process")}</dt>
            <dd>{ov?.process ? `${ov.process.name} #${ov.process.pid} · CPU ${pct(ov.process.cpuPercent)} · ${t("memory")} ${pct(ov.process.memoryPercent)}` : "–"}</dd>
            <dt>{t("Network")}</dt>
            <dd>{ov?.network ? `↑ ${bytes(ov.network.bytesSent)} ↓ ${bytes(ov.network.bytesRecv)}` : "–"}</dd>
          </dl>
        </Card>
        <Card title={t("Readiness")}>
          <ReadyView ready={ready} />
        </Card>
      </div>
      <div class="grid charts">
        <Card>
          <Chart title={t("CPU (%)")} series={cpuSeries} data={cpu} yUnit="%" />
        </Card>
        <Card>
          <Chart title={t("Memory and disk (% used)")} series={memSeries} data={mem} yUnit="%" yMax={100} />
        </Card>
        <Card>
          <Chart title={t("Load average")} series={loadSeries} data={load} />
        </Card>
      </div>
      {streams.data?.enabled && (
        <Card title={t("Event streams")}>
          <Table headings={[t("Stream"), t("Length"), t("Group"), t("Consumers"), t("Pending"), t("Lag")]}>
            {streams.data.streams.flatMap((s) =>
              (s.groups.length ? s.groups : [null]).map((g, i) => (
                <tr key={`${s.stream}-${i}`}>
                  <td>{i === 0 ? s.stream : ""}</td>
                  <td>{i === 0 ? s.length : ""}</td>
                  <td>{g?.name ?? "–"}</td>
                  <td>{g?.consumers ?? "–"}</td>
                  <td>{g?.pending ?? "–"}</td>
                  <td>{g?.lag ?? "–"}</td>
                </tr>
              )),
            )}
          </Table>
        </Card>
      )}
      <ErrorBox error={streams.error} />
      {stats.data?.enabled && (
        <Card title={t("Integration statistics")}>
          <Table headings={[t("System"), t("Contract"), t("Direction"), t("Calls"), t("Succeeded"), t("Average"), t("Slowest"), t("Last error")]}>
            {!stats.data.stats.length && <EmptyRow cols={8} text={t("No calls yet.")} />}
            {stats.data.stats.map((s) => (
              <tr key={`${s.system}/${s.contract}/${s.direction}`}>
                <td>{s.system}</td>
                <td>{s.contract || "–"}</td>
                <td>{s.direction}</td>
                <td>{s.calls}</td>
                <td>{s.successes}</td>
                <td>{s.avgDurationMs} ms</td>
                <td>{s.maxDurationMs} ms</td>
                <td>{s.lastError ? `${s.lastError} (${when(s.lastErrorAt ? Date.parse(s.lastErrorAt) : 0)})` : "–"}</td>
              </tr>
            ))}
          </Table>
        </Card>
      )}
      <ErrorBox error={stats.error} />
    </div>
  );
}

function ReadyView({ ready }: { ready: Ready | null }) {
  if (!ready) return <p class="muted">{t("Loading…")}</p>;
  if (ready.unreachable) return <p><span class="badge bad">{t("unknown")}</span></p>;
  return (
    <div>
      <p>
        <span class={ready.ready ? "badge ok" : "badge bad"}>{ready.ready ? t("ready") : t("not ready")}</span>
      </p>
      <ul class="plain">
        {ready.checks.map((c) => (
          <li key={c.name}>
            <span class={c.ready ? "dot ok" : "dot bad"} aria-hidden="true" />
            <span class="mono">{c.name}</span>
            {c.kind && ` · ${c.kind === "kvstore" ? "Redis" : c.type}`} · {c.ready ? `${c.latencyMs} ms` : t("does not answer")}
          </li>
        ))}
      </ul>
    </div>
  );
}

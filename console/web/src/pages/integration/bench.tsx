// The test bench: integration/ops dry_run, dry_run_inbound, test_connection and
// diagnose_routes, with the masked wire trace shown step by step.
import { useState } from "preact/hooks";
import { t, tk } from "../../i18n";
import { P } from "../../perms";
import { can } from "../../session";
import { Card, ErrorBox, Field, Table, useAction, type Submit } from "../../ui";
import { CodeEditor } from "./code";
import type { ConnectionCheck, DatabaseProbe, DryRunResult, HTTPExchange as Exchange, HTTPProbe, InboundDryRunResult, RouteDiagnostics } from "../../api/ops.gen";
import { itg, parseJSON, pretty } from "./api";
import { DefSelect, useNames } from "./adapters";

export type BenchMode = "dry_run" | "dry_run_inbound" | "connection" | "diagnose";
export interface BenchTarget {
  systemCode?: string;
  contractCode?: string;
  mode?: BenchMode;
}

const MODES: { mode: BenchMode; label: string; perm: string }[] = [
  { mode: "dry_run", label: tk("Dry run (outbound)"), perm: P.itgDryRun },
  { mode: "dry_run_inbound", label: tk("Dry run (inbound)"), perm: P.itgDryRunInbound },
  { mode: "connection", label: tk("Test connection"), perm: P.itgTestConnection },
  { mode: "diagnose", label: tk("Diagnose routes"), perm: P.itgDiagnose },
];


/** Probe is what the connection card shows of either probe. */
type Probe = Partial<HTTPProbe> & Partial<DatabaseProbe> & { reachable: boolean; durationMs: number };

/** Answer is what one bench run answered, by mode. */
type Answer =
  | { mode: "dry_run"; data: DryRunResult }
  | { mode: "dry_run_inbound"; data: InboundDryRunResult }
  | { mode: "connection"; data: ConnectionCheck }
  | { mode: "diagnose"; data: RouteDiagnostics };

const lines = (text: string) =>
  Object.fromEntries(
    text
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .map((l) => {
        const i = l.indexOf(":") >= 0 ? l.indexOf(":") : l.indexOf("=");
        return i < 0 ? [l, ""] : [l.slice(0, i).trim(), l.slice(i + 1).trim()];
      }),
  );

export function Bench({ initial }: { initial: BenchTarget }) {
  const modes = MODES.filter((m) => can(m.perm));
  const [mode, setMode] = useState<BenchMode>(initial.mode && modes.some((m) => m.mode === initial.mode) ? initial.mode : (modes[0]?.mode ?? "dry_run"));
  const names = useNames();
  const [systemCode, setSystemCode] = useState(initial.systemCode ?? "");
  const [contractCode, setContractCode] = useState(initial.contractCode ?? "");
  const [ownScript, setOwnScript] = useState(false);
  const [script, setScript] = useState("return input;\n");
  const [input, setInput] = useState("{}");
  const [method, setMethod] = useState("GET");
  const [path, setPath] = useState("/");
  const [inMethod, setInMethod] = useState("POST");
  const [inPath, setInPath] = useState("/");
  const [inHeaders, setInHeaders] = useState("content-type: application/json");
  const [inQuery, setInQuery] = useState("");
  const [inBody, setInBody] = useState("{}");
  const [handlerOutput, setHandlerOutput] = useState("{}");
  const [result, setResult] = useState<Answer | null>(null);
  const act = useAction();

  const run = async (e: Submit) => {
    e.preventDefault();
    setResult(null);
    await act.run(async () => {
      if (mode === "dry_run") {
        const data = await itg("ops/dry_run", {
          systemCode,
          contractCode,
          script: ownScript ? script : "",
          input: parseJSON(input, t("Input")) ?? null,
        });
        setResult({ mode, data });
      } else if (mode === "dry_run_inbound") {
        const data = await itg("ops/dry_run_inbound", {
          systemCode,
          contractCode,
          script: ownScript ? script : "",
          request: { method: inMethod, path: inPath, headers: lines(inHeaders), query: lines(inQuery), body: inBody },
          handlerOutput: parseJSON(handlerOutput, t("Handler output")) ?? null,
        });
        setResult({ mode, data });
      } else if (mode === "connection") {
        setResult({ mode, data: await itg("ops/test_connection", { systemCode, method, path }) });
      } else {
        setResult({ mode: "diagnose", data: await itg("ops/diagnose_routes") });
      }
    });
  };

  return (
    <>
      <Card title={t("Test bench")}>
        <div class="tabs" role="tablist" aria-label={t("Operation")}>
          {modes.map((m) => (
            <button
              key={m.mode}
              type="button"
              role="tab"
              aria-selected={mode === m.mode}
              onClick={() => {
                setMode(m.mode);
                setResult(null);
              }}
            >
              {t(m.label)}
            </button>
          ))}
        </div>
        <form onSubmit={run} class="editor bench">
          {mode !== "diagnose" && (
            <div class="cols">
              <Field label={t("System")}>
                <DefSelect label={t("System")} required byCode items={names.systems} value={systemCode} onChange={setSystemCode} />
              </Field>
              {mode !== "connection" && (
                <Field label={t("Contract")}>
                  <DefSelect label={t("Contract")} required byCode items={names.contracts} value={contractCode} onChange={setContractCode} />
                </Field>
              )}
            </div>
          )}
          {mode === "connection" && (
            <div class="cols">
              <Field label={t("Method")}>
                <select value={method} onChange={(e) => setMethod(e.currentTarget.value)}>
                  {["GET", "HEAD", "OPTIONS", "POST"].map((m) => (
                    <option key={m}>{m}</option>
                  ))}
                </select>
              </Field>
              <Field label={t("Path")} hint={t("Relative to the system's base URL")}>
                <input class="mono" value={path} onInput={(e) => setPath(e.currentTarget.value)} />
              </Field>
            </div>
          )}
          {mode === "diagnose" && <p class="muted">{t("Checks every route, adapter, system and contract for gaps and dangling references.")}</p>}
          {(mode === "dry_run" || mode === "dry_run_inbound") && (
            <>
              {mode === "dry_run" ? (
                <Field label={t("Input (JSON)")}>
                  <textarea name="input" class="mono" rows={5} value={input} onInput={(e) => setInput(e.currentTarget.value)} />
                </Field>
              ) : (
                <div class="cols">
                  <div>
                    <div class="cols">
                      <Field label={t("Method")}>
                        <input class="mono" value={inMethod} onInput={(e) => setInMethod(e.currentTarget.value)} />
                      </Field>
                      <Field label={t("Path")}>
                        <input class="mono" value={inPath} onInput={(e) => setInPath(e.currentTarget.value)} />
                      </Field>
                    </div>
                    <Field label={t("Headers")} hint={t("One name: value a line")}>
                      <textarea class="mono" rows={3} value={inHeaders} onInput={(e) => setInHeaders(e.currentTarget.value)} />
                    </Field>
                    <Field label={t("Query")} hint={t("One name=value a line")}>
                      <textarea class="mono" rows={2} value={inQuery} onInput={(e) => setInQuery(e.currentTarget.value)} />
                    </Field>
                  </div>
                  <div>
                    <Field label={t("Body")}>
                      <textarea class="mono" rows={4} value={inBody} onInput={(e) => setInBody(e.currentTarget.value)} />
                    </Field>
                    <Field label={t("Handler output (JSON)")} hint={t("What the stub answers in place of the business handler")}>
                      <textarea class="mono" rows={3} value={handlerOutput} onInput={(e) => setHandlerOutput(e.currentTarget.value)} />
                    </Field>
                  </div>
                </div>
              )}
              <label class="check">
                <input type="checkbox" checked={ownScript} onChange={(e) => setOwnScript(e.currentTarget.checked)} />
                <span>{t("Run this script instead of the saved adapter")}</span>
              </label>
              {ownScript && (
                <Field label={t("Script")}>
                  <CodeEditor rows={10} value={script} onInput={setScript} />
                </Field>
              )}
            </>
          )}
          <ErrorBox error={act.error ?? names.error} />
          <div class="actions">
            <button type="submit" class="primary" disabled={act.busy}>
              {act.busy ? t("Running…") : t("Run")}
            </button>
          </div>
        </form>
      </Card>
      {result && <BenchResult answer={result} />}
    </>
  );
}

function Outcome({ failureKind, error }: { failureKind?: string; error?: string }) {
  return failureKind || error ? (
    <p class="error" role="alert">
      <span class="badge bad">{failureKind || t("failed")}</span> {error}
    </p>
  ) : (
    <p class="notice" role="status">
      <span class="badge ok">{t("succeeded")}</span>
    </p>
  );
}

function BenchResult({ answer }: { answer: Answer }) {
  if (answer.mode === "dry_run") {
    const r = answer.data;
    return (
      <Card title={t("Result")} class="bench-result">
        <Outcome failureKind={r.failureKind} error={r.error} />
        <h3>{t("Output")}</h3>
        <pre class="json">{pretty(r.output) || "null"}</pre>
        <Trace trace={r.trace ?? []} />
      </Card>
    );
  }
  if (answer.mode === "dry_run_inbound") {
    const r = answer.data;
    return (
      <Card title={t("Result")} class="bench-result">
        <Outcome failureKind={r.failureKind} error={r.error} />
        <h3>{t("Dispatched input")}</h3>
        <pre class="json">{pretty(r.dispatchedInput) || "null"}</pre>
        <h3>{t("Reply")}</h3>
        <pre class="json">{pretty(r.reply) || "null"}</pre>
      </Card>
    );
  }
  if (answer.mode === "connection") {
    const r = answer.data;
    return (
      <Card title={t("Connection")} class="bench-result">
        {!r.http && !r.database && <p class="muted">{t("The system has neither a base URL nor a data source.")}</p>}
        {(
          [
            [tk("HTTP"), r.http],
            [tk("Database"), r.database],
          ] as [string, Probe | undefined][]
        ).map(
          ([label, p]) =>
            p && (
              <dl class="meta probe" key={label} data-probe={label}>
                <dt>{t(label)}</dt>
                <dd>
                  <span class={p.reachable ? "badge ok" : "badge bad"}>{p.reachable ? t("reachable") : t("unreachable")}</span>
                </dd>
                {p.status !== undefined && (
                  <>
                    <dt>{t("Status")}</dt>
                    <dd class="mono">
                      {p.status} {p.statusText}
                    </dd>
                  </>
                )}
                {p.version && (
                  <>
                    <dt>{t("Version")}</dt>
                    <dd class="mono">{p.version}</dd>
                  </>
                )}
                <dt>{t("Duration")}</dt>
                <dd>{p.durationMs} ms</dd>
                {p.error && (
                  <>
                    <dt>{t("Error")}</dt>
                    <dd class="err-text">{p.error}</dd>
                  </>
                )}
              </dl>
            ),
        )}
      </Card>
    );
  }
  const findings = answer.data.findings ?? [];
  return (
    <Card title={t("Route findings")} class="bench-result">
      {findings.length ? (
        <Table headings={[t("Finding"), t("Route key"), t("Contract"), t("System")]}>
          {findings.map((f, i) => (
            <tr key={i}>
              <td>
                <span class="badge bad">{f.kind}</span>
              </td>
              <td class="mono">{f.routeKey === "" ? t("(default)") : f.routeKey}</td>
              <td class="mono">{f.contractCode || "–"}</td>
              <td class="mono">{f.systemCode || "–"}</td>
            </tr>
          ))}
        </Table>
      ) : (
        <p class="notice" role="status">
          {t("No findings: every route resolves.")}
        </p>
      )}
    </Card>
  );
}

/** Trace shows each wire exchange (masked by the server) as one step. */
export function Trace({ trace }: { trace: Exchange[] }) {
  if (!trace.length) return <p class="muted">{t("No wire calls.")}</p>;
  return (
    <>
      <h3>{t("Wire trace")}</h3>
      <ol class="trace">
        {trace.map((x, i) => (
          <li key={i} class="step">
            <details open={i === 0}>
              <summary>
                <span class="mono">
                  {x.method} {x.url}
                </span>{" "}
                {x.status ? (
                  <span class={x.status < 400 ? "badge ok" : "badge bad"}>{x.status}</span>
                ) : (
                  x.error && <span class="badge bad">{t("no answer")}</span>
                )}{" "}
                <span class="muted">{x.durationMs} ms</span>
              </summary>
              {x.error && <p class="err-text">{x.error}</p>}
              <div class="cols">
                <div>
                  <h4>{t("Request")}</h4>
                  <Headers h={x.requestHeaders} />
                  {x.requestBody && <pre class="json">{pretty(x.requestBody)}</pre>}
                </div>
                <div>
                  <h4>{t("Response")}</h4>
                  <Headers h={x.responseHeaders} />
                  {x.responseBody && <pre class="json">{pretty(x.responseBody)}</pre>}
                </div>
              </div>
            </details>
          </li>
        ))}
      </ol>
    </>
  );
}

function Headers({ h }: { h?: Record<string, string> }) {
  const e = Object.entries(h ?? {});
  if (!e.length) return null;
  return (
    <dl class="headers">
      {e.map(([k, v]) => [
        <dt key={`k${k}`} class="mono">
          {k}
        </dt>,
        <dd key={`v${k}`} class="mono">
          {v}
        </dd>,
      ])}
    </dl>
  );
}

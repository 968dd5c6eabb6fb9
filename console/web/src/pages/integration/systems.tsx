// Systems: list, create and edit (authentication both ways with secrets masked and kept, the
// envelope, the data source, params, retry), delete, and the key status of stored secrets.
import { useState } from "preact/hooks";
import { t } from "../../i18n";
import { P } from "../../perms";
import { can } from "../../session";
import { Field, useAction, type Submit } from "../../ui";
import { CodeEditor } from "./code";
import { itg, MASK, type AuthConfig, type DataSource, type System } from "./api";
import { canEdit, CodeName, DefList, EditorDialog, Enabled, EnabledCheck, Mono, SearchBox } from "./crud";
import type { BenchTarget } from "./bench";
import { KeyStatus } from "./keystatus";

/** Fixed params of each scheme, with the secret ones marked; other schemes take free pairs. */
const SCHEMES: Record<string, { name: string; secret?: boolean }[] | "free"> = {
  none: [],
  http_basic: [{ name: "username" }, { name: "password", secret: true }],
  bearer: [{ name: "token", secret: true }],
  header: "free",
  query: "free",
  signature: [{ name: "appId" }, { name: "secret", secret: true }],
  ip: [{ name: "whitelist" }],
  script: "free",
};
const OUTBOUND = ["none", "http_basic", "bearer", "header", "query", "signature", "script"];
const INBOUND = ["none", "ip", "http_basic", "bearer", "header", "query", "signature", "script"];

export function Systems({ onBench }: { onBench: (to: BenchTarget) => void }) {
  const [query, setQuery] = useState("");
  return (
    <>
      <DefList
        resource="system"
        perm="system"
        filter={query ? { code: query } : {}}
        title={<SearchBox label={t("Search systems")} placeholder={t("Search by code")} onSearch={setQuery} />}
        newLabel={t("New system")}
        headings={[t("Code"), t("Name"), t("Base URL"), t("Outbound auth"), t("Inbound auth"), t("Data source"), t("State")]}
        rowAttrs={(s) => ({ "data-system": s.code })}
        row={(s) => [
          <Mono>{s.code}</Mono>,
          s.name,
          <Mono>{s.baseUrl || "–"}</Mono>,
          s.outboundAuth?.scheme ?? "–",
          s.inboundAuth?.scheme ?? "–",
          s.dataSource ? `${s.dataSource.kind} (${s.dataSource.mode || "read_only"})` : "–",
          <Enabled on={s.isEnabled} />,
        ]}
        extra={(s) =>
          can(P.itgTestConnection) && (
            <button type="button" onClick={() => onBench({ systemCode: s.code, mode: "connection" })}>
              {t("Test connection")}
            </button>
          )
        }
        empty={t("No systems.")}
        confirm={(s) => t("Delete the system {name}?", { name: s.code })}
        deleted={(s) => t("{name} deleted.", { name: s.code })}
        editor={(s, close) => <SystemEditor system={s} onClose={close} />}
      />
      {can(P.itgKeyStatus) && <KeyStatus />}
    </>
  );
}

type Pairs = [string, string][];
const toPairs = (m?: Record<string, string> | null): Pairs => Object.entries(m ?? {});
const fromPairs = (p: Pairs): Record<string, string> => Object.fromEntries(p.filter(([k]) => k.trim()).map(([k, v]) => [k.trim(), v]));

/** PairsEditor edits name/value pairs; secret values are password fields that show the mask. */
function PairsEditor(props: { label: string; pairs: Pairs; onChange: (p: Pairs) => void; secret?: boolean }) {
  const set = (i: number, k: 0 | 1, v: string) => props.onChange(props.pairs.map((p, j) => (j === i ? (k === 0 ? [v, p[1]] : [p[0], v]) : p)));
  return (
    <fieldset class="pairs">
      <legend>{props.label}</legend>
      {props.pairs.map(([k, v], i) => (
        <div class="pair" key={i}>
          <input aria-label={t("Name")} placeholder={t("Name")} value={k} onInput={(e) => set(i, 0, e.currentTarget.value)} />
          <SecretInput label={t("Value")} secret={props.secret} value={v} onInput={(x) => set(i, 1, x)} />
          <button type="button" aria-label={t("Remove {name}", { name: k || t("Value") })} onClick={() => props.onChange(props.pairs.filter((_, j) => j !== i))}>
            ×
          </button>
        </div>
      ))}
      <button type="button" onClick={() => props.onChange([...props.pairs, ["", ""]])}>
        {t("Add")}
      </button>
    </fieldset>
  );
}

/** SecretInput shows a stored secret as the server's mask; typing replaces it. */
function SecretInput(props: { label: string; value: string; onInput: (v: string) => void; secret?: boolean; id?: string }) {
  const kept = props.secret && props.value === MASK;
  return (
    <span class="secret-input">
      <input
        id={props.id}
        aria-label={props.id ? undefined : props.label}
        type={(props.secret && !kept ? "password" : "text") as "text"}
        autocomplete={props.secret ? "new-password" : "off"}
        class={kept ? "mono masked" : undefined}
        value={props.value}
        onFocus={(e) => kept && e.currentTarget.select()}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
      {kept && <small class="muted">{t("stored, kept unless replaced")}</small>}
    </span>
  );
}

function AuthEditor(props: { legend: string; schemes: string[]; auth: AuthConfig | null; onChange: (a: AuthConfig | null) => void }) {
  const a = props.auth;
  const shape = a ? SCHEMES[a.scheme] : undefined;
  const params = a?.params ?? {};
  const setParams = (p: Record<string, string>) => a && props.onChange({ ...a, params: p });
  return (
    <fieldset class="auth">
      <legend>{props.legend}</legend>
      <Field label={t("Scheme")}>
        <select
          value={a?.scheme ?? ""}
          onChange={(e) => {
            const v = e.currentTarget.value;
            props.onChange(v ? { scheme: v, params: {} } : null);
          }}
        >
          <option value="">{t("not set")}</option>
          {props.schemes.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </Field>
      {a && Array.isArray(shape) &&
        shape.map((p) => (
          <div class="field" key={p.name}>
            <label>
              {p.name}
              <SecretInput label={p.name} secret={p.secret} value={params[p.name] ?? ""} onInput={(v) => setParams({ ...params, [p.name]: v })} />
            </label>
          </div>
        ))}
      {a && shape === "free" && (
        <PairsEditor label={t("Params (all secret)")} secret pairs={toPairs(params)} onChange={(p) => setParams(fromPairs(p))} />
      )}
      {a?.scheme === "script" && (
        <Field label={t("Authentication script")}>
          <CodeEditor rows={6} value={a.script ?? ""} onInput={(v) => props.onChange({ ...a, script: v })} />
        </Field>
      )}
    </fieldset>
  );
}

function SystemEditor({ system, onClose }: { system: System | null; onClose: (saved: boolean) => void }) {
  const s = system;
  const [code, setCode] = useState(s?.code ?? "");
  const [name, setName] = useState(s?.name ?? "");
  const [baseUrl, setBaseUrl] = useState(s?.baseUrl ?? "");
  const [timeoutMs, setTimeoutMs] = useState(String(s?.timeoutMs ?? 0));
  const [enabled, setEnabled] = useState(s?.isEnabled ?? true);
  const [outbound, setOutbound] = useState<AuthConfig | null>(s?.outboundAuth ?? null);
  const [inbound, setInbound] = useState<AuthConfig | null>(s?.inboundAuth ?? null);
  const [envReq, setEnvReq] = useState(s?.outboundEnvelope?.request ?? "");
  const [envRes, setEnvRes] = useState(s?.outboundEnvelope?.response ?? "");
  const [ds, setDs] = useState<DataSource>(s?.dataSource ?? { kind: "" });
  const [params, setParams] = useState<Pairs>(toPairs(s?.params));
  const [retry, setRetry] = useState(String(s?.retry?.maxAttempts ?? 1));
  const [backoff, setBackoff] = useState(String(s?.retry?.initialBackoffMs ?? 200));
  const [maxBackoff, setMaxBackoff] = useState(String(s?.retry?.maxBackoffMs ?? 2000));
  const act = useAction();
  const readOnly = !canEdit("system", !!s);
  const dsField = (k: keyof DataSource, label: string, type: "text" | "number" = "text") => (
    <Field label={label}>
      <input
        type={type as "text"}
        value={String(ds[k] ?? "")}
        onInput={(e) => setDs({ ...ds, [k]: type === "number" ? Number(e.currentTarget.value) || undefined : e.currentTarget.value })}
      />
    </Field>
  );
  const submit = async (e: Submit) => {
    e.preventDefault();
    const body: Record<string, unknown> = {
      ...(s ? { id: s.id } : {}),
      code,
      name,
      baseUrl,
      timeoutMs: Number(timeoutMs) || 0,
      isEnabled: enabled,
      outboundAuth: outbound,
      inboundAuth: inbound,
      outboundEnvelope: envReq.trim() || envRes.trim() ? { request: envReq, response: envRes } : null,
      dataSource: ds.kind ? ds : null,
      params: fromPairs(params),
      retry: Number(retry) > 1 ? { maxAttempts: Number(retry), initialBackoffMs: Number(backoff), maxBackoffMs: Number(maxBackoff) } : null,
    };
    if (await act.run(() => itg(s ? "system/update" : "system/create", body))) onClose(true);
  };
  return (
    <EditorDialog title={s ? s.code : t("New system")} onClose={() => onClose(false)} onSubmit={submit} act={act} readOnly={readOnly} isNew={!s}>
      <div class="cols">
        <div>
          <CodeName code={code} name={name} onCode={setCode} onName={setName} />
          <Field label={t("Base URL")} hint={t("Absolute; adapters call paths relative to it")}>
            <input name="baseUrl" type="url" class="mono" value={baseUrl} onInput={(e) => setBaseUrl(e.currentTarget.value)} />
          </Field>
          <Field label={t("Timeout per call (ms, 0 = 30 s)")}>
            <input type="number" min="0" value={timeoutMs} onInput={(e) => setTimeoutMs(e.currentTarget.value)} />
          </Field>
          <Field label={t("Attempts (retries of idempotent calls)")}>
            <input type="number" min="1" value={retry} onInput={(e) => setRetry(e.currentTarget.value)} />
          </Field>
          {Number(retry) > 1 && (
            <>
              <Field label={t("First backoff (ms)")}>
                <input type="number" min="0" value={backoff} onInput={(e) => setBackoff(e.currentTarget.value)} />
              </Field>
              <Field label={t("Longest backoff (ms)")}>
                <input type="number" min="0" value={maxBackoff} onInput={(e) => setMaxBackoff(e.currentTarget.value)} />
              </Field>
            </>
          )}
          <PairsEditor label={t("Params (not secret, visible to scripts)")} pairs={params} onChange={setParams} />
          <EnabledCheck value={enabled} onChange={setEnabled} />
        </div>
        <div>
          <AuthEditor legend={t("Outbound authentication")} schemes={OUTBOUND} auth={outbound} onChange={setOutbound} />
          <AuthEditor legend={t("Inbound authentication")} schemes={INBOUND} auth={inbound} onChange={setInbound} />
          <p class="muted small">{t("Secrets show as ****** and are kept when saved unchanged; type a new value to replace one.")}</p>
        </div>
      </div>
      <details open={!!(envReq || envRes)}>
        <summary>{t("Envelope")}</summary>
        <Field label={t("Request envelope script")}>
          <CodeEditor rows={5} value={envReq} onInput={setEnvReq} />
        </Field>
        <Field label={t("Response envelope script")}>
          <CodeEditor rows={5} value={envRes} onInput={setEnvRes} />
        </Field>
      </details>
      <details open={!!ds.kind}>
        <summary>{t("Data source")}</summary>
        <div class="cols">
          <div>
            <Field label={t("Kind")}>
              <select value={ds.kind} onChange={(e) => setDs({ ...ds, kind: e.currentTarget.value })}>
                <option value="">{t("none")}</option>
                <option value="postgres">postgres</option>
                <option value="mysql">mysql</option>
                <option value="sqlite">sqlite</option>
              </select>
            </Field>
            <Field label={t("Mode")}>
              <select value={ds.mode ?? ""} onChange={(e) => setDs({ ...ds, mode: e.currentTarget.value })}>
                <option value="">read_only</option>
                <option value="read_write">read_write</option>
              </select>
            </Field>
            {ds.kind === "sqlite" ? dsField("path", t("Path")) : dsField("host", t("Host"))}
            {ds.kind !== "sqlite" && dsField("port", t("Port"), "number")}
          </div>
          <div>
            {dsField("database", t("Database"))}
            {dsField("user", t("User"))}
            <div class="field">
              <label>
                {t("Password")}
                <SecretInput label={t("Password")} secret value={ds.password ?? ""} onInput={(v) => setDs({ ...ds, password: v })} />
              </label>
            </div>
            {dsField("schema", t("Schema"))}
            {dsField("sslMode", t("SSL mode"))}
          </div>
        </div>
      </details>
    </EditorDialog>
  );
}

// Adapters: list with filters, create and edit the script in the JavaScript editor, delete,
// and open one on the test bench.
import { useMemo, useState } from "preact/hooks";
import { t } from "../../i18n";
import { P } from "../../perms";
import { can } from "../../session";
import { ErrorBox, Field, useAction, useAsync, type Submit } from "../../ui";
import { CodeEditor } from "./code";
import { all, itg, type Adapter } from "./api";
import { canEdit, DefList, EditorDialog, Enabled, EnabledCheck, Mono } from "./crud";
import type { BenchTarget } from "./bench";

/** useNames loads systems and contracts (when the user may list them) to show codes for ids. */
export function useNames() {
  const systems = useAsync(() => (can(P.itgSystemQuery) ? all("system") : Promise.resolve([])), []);
  const contracts = useAsync(() => (can(P.itgContractQuery) ? all("contract") : Promise.resolve([])), []);
  return useMemo(() => {
    const sys = new Map((systems.data ?? []).map((s) => [s.id, s]));
    const con = new Map((contracts.data ?? []).map((c) => [c.id, c]));
    return {
      systems: systems.data ?? [],
      contracts: contracts.data ?? [],
      system: (id: string) => sys.get(id)?.code ?? id,
      contract: (id: string) => (id ? (con.get(id)?.code ?? id) : ""),
      error: systems.error ?? contracts.error,
    };
  }, [systems.data, contracts.data]);
}
export type Names = ReturnType<typeof useNames>;

/** SystemSelect and ContractSelect pick a definition by id (or code with byCode). */
export function DefSelect(props: {
  label: string;
  items: { id: string; code: string; name: string }[];
  value: string;
  onChange: (v: string) => void;
  any?: string;
  byCode?: boolean;
  required?: boolean;
}) {
  return (
    <select aria-label={props.label} required={props.required} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
      <option value="">{props.any ?? t("Choose…")}</option>
      {props.items.map((x) => (
        <option key={x.id} value={props.byCode ? x.code : x.id}>
          {x.code} — {x.name}
        </option>
      ))}
    </select>
  );
}

export function Adapters({ onBench }: { onBench: (to: BenchTarget) => void }) {
  const names = useNames();
  const [f, setF] = useState({ systemId: "", contractId: "", direction: "" });
  const set = (k: keyof typeof f) => (v: string) => setF({ ...f, [k]: v });
  return (
    <DefList
      resource="adapter"
      perm="adapter"
      filter={Object.fromEntries(Object.entries(f).filter(([, v]) => v))}
      title={
        <div class="search">
          <DefSelect label={t("System")} items={names.systems} value={f.systemId} onChange={set("systemId")} any={t("Every system")} />
          <DefSelect label={t("Contract")} items={names.contracts} value={f.contractId} onChange={set("contractId")} any={t("Every contract")} />
          <select aria-label={t("Direction")} value={f.direction} onChange={(e) => set("direction")(e.currentTarget.value)}>
            <option value="">{t("Both directions")}</option>
            <option value="outbound">{t("outbound")}</option>
            <option value="inbound">{t("inbound")}</option>
          </select>
        </div>
      }
      newLabel={t("New adapter")}
      headings={[t("System"), t("Contract"), t("Direction"), t("Script"), t("Timeout"), t("State")]}
      rowAttrs={(a) => ({ "data-adapter": `${names.system(a.systemId)}/${names.contract(a.contractId)}/${a.direction}` })}
      row={(a) => [
        <Mono>{names.system(a.systemId)}</Mono>,
        <Mono>{names.contract(a.contractId)}</Mono>,
        t(a.direction),
        <span class="mono clip">{a.script.split("\n")[0]}</span>,
        a.timeoutMs ? `${a.timeoutMs} ms` : "–",
        <Enabled on={a.isEnabled} />,
      ]}
      extra={(a) =>
        (a.direction === "outbound" ? can(P.itgDryRun) : can(P.itgDryRunInbound)) && (
          <button
            type="button"
            onClick={() =>
              onBench({
                systemCode: names.system(a.systemId),
                contractCode: names.contract(a.contractId),
                mode: a.direction === "outbound" ? "dry_run" : "dry_run_inbound",
              })
            }
          >
            {t("Test bench")}
          </button>
        )
      }
      empty={t("No adapters.")}
      confirm={() => t("Delete this adapter?")}
      deleted={() => t("Adapter deleted.")}
      editor={(a, close) => <AdapterEditor adapter={a} names={names} onClose={close} />}
    >
      <ErrorBox error={names.error} />
    </DefList>
  );
}

const SAMPLE = `// input: the contract's input; http, sql, codes, errors, system are bound.
const r = http.get("/status", { query: { id: String(input.id ?? "") } });
if (!r.ok) errors.upstream(\`status \${r.status}\`);
return r.json();
`;

function AdapterEditor({ adapter, names, onClose }: { adapter: Adapter | null; names: Names; onClose: (saved: boolean) => void }) {
  const a = adapter;
  const [systemId, setSystemId] = useState(a?.systemId ?? "");
  const [contractId, setContractId] = useState(a?.contractId ?? "");
  const [direction, setDirection] = useState(a?.direction ?? "outbound");
  const [script, setScript] = useState(a?.script ?? SAMPLE);
  const [timeoutMs, setTimeoutMs] = useState(String(a?.timeoutMs ?? 0));
  const [enabled, setEnabled] = useState(a?.isEnabled ?? true);
  const act = useAction();
  const readOnly = !canEdit("adapter", !!a);
  const submit = async (e: Submit) => {
    e.preventDefault();
    const body = { ...(a ? { id: a.id } : {}), systemId, contractId, direction, script, timeoutMs: Number(timeoutMs) || 0, isEnabled: enabled };
    if (await act.run(() => itg(a ? "adapter/update" : "adapter/create", body))) onClose(true);
  };
  return (
    <EditorDialog title={a ? t("Adapter {system} / {contract}", { system: names.system(a.systemId), contract: names.contract(a.contractId) }) : t("New adapter")} onClose={() => onClose(false)} onSubmit={submit} act={act} readOnly={readOnly} isNew={!a}>
      <div class="cols three">
        <Field label={t("System")}>
          <DefSelect label={t("System")} required items={names.systems} value={systemId} onChange={setSystemId} />
        </Field>
        <Field label={t("Contract")}>
          <DefSelect label={t("Contract")} required items={names.contracts} value={contractId} onChange={setContractId} />
        </Field>
        <Field label={t("Direction")}>
          <select value={direction} onChange={(e) => setDirection(e.currentTarget.value as Adapter["direction"])}>
            <option value="outbound">{t("outbound")}</option>
            <option value="inbound">{t("inbound")}</option>
          </select>
        </Field>
      </div>
      <Field label={t("Script")} hint={t("Tab indents, Shift+Tab outdents; press Escape, then Tab, to leave the editor.")}>
        <CodeEditor rows={16} value={script} onInput={setScript} />
      </Field>
      <div class="cols three">
        <Field label={t("Timeout (ms, 0 = run_timeout)")}>
          <input type="number" min="0" value={timeoutMs} onInput={(e) => setTimeoutMs(e.currentTarget.value)} />
        </Field>
        <EnabledCheck value={enabled} onChange={setEnabled} />
      </div>
    </EditorDialog>
  );
}

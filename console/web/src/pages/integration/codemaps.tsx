// Code maps: per system and code set, canonical ↔ external values with aliases and the
// unmapped policy; the host's code sets (integration/code_set) when the server has a catalog.
import { useState } from "preact/hooks";
import { t } from "../../i18n";
import { Field, useAction, useAsync, type Submit } from "../../ui";
import { itg, parseJSON, type CodeMap, type CodeMapEntry } from "./api";
import { DefSelect, useNames, type Names } from "./adapters";
import { canEdit, DefList, EditorDialog, Enabled, EnabledCheck, Mono, SearchBox } from "./crud";

interface CodeSets {
  supported: boolean;
  codeSets?: { codeSet: string; name: string }[];
}

export function CodeMaps() {
  const names = useNames();
  const [query, setQuery] = useState("");
  const sets = useAsync(() => itg("code_set/list_code_sets"), []);
  return (
    <DefList
      resource="code_map"
      perm="code_map"
      filter={query ? { codeSet: query } : {}}
      title={<SearchBox label={t("Search code maps")} placeholder={t("Search by code set")} onSearch={setQuery} />}
      newLabel={t("New code map")}
      headings={[t("System"), t("Code set"), t("Name"), t("Entries"), t("Unmapped"), t("State")]}
      rowAttrs={(m) => ({ "data-codemap": `${names.system(m.systemId)}/${m.codeSet}` })}
      row={(m) => [
        <Mono>{names.system(m.systemId)}</Mono>,
        <Mono>{m.codeSet}</Mono>,
        m.name,
        String(m.entries?.length ?? 0),
        m.onUnmapped || "reject",
        <Enabled on={m.isEnabled} />,
      ]}
      empty={t("No code maps.")}
      confirm={(m) => t("Delete the code map {name}?", { name: m.codeSet })}
      deleted={(m) => t("{name} deleted.", { name: m.codeSet })}
      editor={(m, close) => <CodeMapEditor map={m} names={names} sets={sets.data} onClose={close} />}
    >
      <p class="muted small">
        {sets.data?.supported
          ? t("Code sets of the host's catalog: {sets}", { sets: (sets.data.codeSets ?? []).map((c) => c.codeSet).join(", ") || "–" })
          : t("The server has no code set catalog: any code set name is accepted.")}
      </p>
    </DefList>
  );
}

/** side renders one side of an entry: the value and its aliases, separated by "|". */
const side = (v: unknown, aliases?: unknown[]) => [v, ...(aliases ?? [])].map((x) => JSON.stringify(x)).join(" | ");
/** value reads one value: JSON (numbers, booleans, quoted strings), else the text as a string. */
const value = (s: string): unknown => {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
};
const values = (s: string) => s.split("|").map((x) => value(x.trim()));

/** entriesText and parseEntries write and read entries one a line: canonical = external. */
const entriesText = (e: CodeMapEntry[] | null) => (e ?? []).map((x) => `${side(x.canonical, x.canonicalAliases)} = ${side(x.external, x.externalAliases)}`).join("\n");
function parseEntries(text: string): CodeMapEntry[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const i = l.indexOf("=");
      if (i < 0) throw new Error(t("Each entry needs canonical = external: {line}", { line: l }));
      const [c, ...ca] = values(l.slice(0, i));
      const [x, ...xa] = values(l.slice(i + 1));
      return { canonical: c, external: x, ...(ca.length ? { canonicalAliases: ca } : {}), ...(xa.length ? { externalAliases: xa } : {}) };
    });
}

function CodeMapEditor(props: { map: CodeMap | null; names: Names; sets?: CodeSets; onClose: (saved: boolean) => void }) {
  const m = props.map;
  const [systemId, setSystemId] = useState(m?.systemId ?? "");
  const [codeSet, setCodeSet] = useState(m?.codeSet ?? "");
  const [name, setName] = useState(m?.name ?? "");
  const [entries, setEntries] = useState(entriesText(m?.entries ?? null));
  const [onUnmapped, setOnUnmapped] = useState(m?.onUnmapped || "reject");
  const [fbCanonical, setFbCanonical] = useState(m?.fallbackCanonical === undefined ? "" : JSON.stringify(m.fallbackCanonical));
  const [fbExternal, setFbExternal] = useState(m?.fallbackExternal === undefined ? "" : JSON.stringify(m.fallbackExternal));
  const [enabled, setEnabled] = useState(m?.isEnabled ?? true);
  const act = useAction();
  const submit = async (e: Submit) => {
    e.preventDefault();
    if (
      await act.run(() =>
        itg(m ? "code_map/update" : "code_map/create", {
          ...(m ? { id: m.id } : {}),
          systemId,
          codeSet,
          name,
          entries: parseEntries(entries),
          onUnmapped,
          ...(onUnmapped === "fallback"
            ? { fallbackCanonical: parseJSON(fbCanonical, t("Canonical fallback")), fallbackExternal: parseJSON(fbExternal, t("External fallback")) }
            : {}),
          isEnabled: enabled,
        }),
      )
    )
      props.onClose(true);
  };
  return (
    <EditorDialog title={m ? m.codeSet : t("New code map")} onClose={() => props.onClose(false)} onSubmit={submit} act={act} readOnly={!canEdit("code_map", !!m)} isNew={!m}>
      <div class="cols">
        <div>
          <Field label={t("System")}>
            <DefSelect label={t("System")} required items={props.names.systems} value={systemId} onChange={setSystemId} />
          </Field>
          <Field label={t("Code set")}>
            <input class="mono" required list="itg-code-sets" value={codeSet} onInput={(e) => setCodeSet(e.currentTarget.value)} />
          </Field>
          <datalist id="itg-code-sets">
            {(props.sets?.codeSets ?? []).map((c) => (
              <option key={c.codeSet} value={c.codeSet}>
                {c.name}
              </option>
            ))}
          </datalist>
          <Field label={t("Name")}>
            <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field label={t("Unmapped values")}>
            <select value={onUnmapped} onChange={(e) => setOnUnmapped(e.currentTarget.value)}>
              <option value="reject">reject</option>
              <option value="passthrough">passthrough</option>
              <option value="fallback">fallback</option>
            </select>
          </Field>
          {onUnmapped === "fallback" && (
            <>
              <Field label={t("Canonical fallback")}>
                <input class="mono" value={fbCanonical} onInput={(e) => setFbCanonical(e.currentTarget.value)} />
              </Field>
              <Field label={t("External fallback")}>
                <input class="mono" value={fbExternal} onInput={(e) => setFbExternal(e.currentTarget.value)} />
              </Field>
            </>
          )}
          <EnabledCheck value={enabled} onChange={setEnabled} />
        </div>
        <div>
          <Field label={t("Entries")} hint={t("One a line: canonical = external, aliases after |; values are JSON or text, e.g. M | 1 = male")}>
            <textarea name="entries" class="mono" rows={12} value={entries} onInput={(e) => setEntries(e.currentTarget.value)} />
          </Field>
        </div>
      </div>
    </EditorDialog>
  );
}

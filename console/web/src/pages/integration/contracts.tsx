// Contracts: list, create and edit with their labels and JSON Schemas, delete.
import { useState } from "preact/hooks";
import { t } from "../../i18n";
import { Field, useAction, type Submit } from "../../ui";
import { itg, parseJSON, pretty, type Contract } from "./api";
import { canEdit, CodeName, DefList, EditorDialog, Enabled, EnabledCheck, Mono, SearchBox } from "./crud";

export function Contracts() {
  const [query, setQuery] = useState("");
  return (
    <DefList
      resource="contract"
      perm="contract"
      filter={query ? { code: query } : {}}
      title={<SearchBox label={t("Search contracts")} placeholder={t("Search by code")} onSearch={setQuery} />}
      newLabel={t("New contract")}
      headings={[t("Code"), t("Name"), t("Labels"), t("Schemas"), t("State")]}
      rowAttrs={(c) => ({ "data-contract": c.code })}
      row={(c) => [
        <Mono>{c.code}</Mono>,
        c.name,
        <Mono>
          {Object.entries(c.labels ?? {})
            .map(([k, v]) => `${k}=${v}`)
            .join(", ") || "–"}
        </Mono>,
        [c.inputSchema ? t("input") : "", c.outputSchema ? t("output") : ""].filter(Boolean).join(", ") || "–",
        <Enabled on={c.isEnabled} />,
      ]}
      empty={t("No contracts.")}
      confirm={(c) => t("Delete the contract {name}?", { name: c.code })}
      deleted={(c) => t("{name} deleted.", { name: c.code })}
      editor={(c, close) => <ContractEditor contract={c} onClose={close} />}
    />
  );
}

function ContractEditor({ contract, onClose }: { contract: Contract | null; onClose: (saved: boolean) => void }) {
  const c = contract;
  const [code, setCode] = useState(c?.code ?? "");
  const [name, setName] = useState(c?.name ?? "");
  const [description, setDescription] = useState(c?.description ?? "");
  const [labels, setLabels] = useState(
    Object.entries(c?.labels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join("\n"),
  );
  const [input, setInput] = useState(pretty(c?.inputSchema));
  const [output, setOutput] = useState(pretty(c?.outputSchema));
  const [enabled, setEnabled] = useState(c?.isEnabled ?? true);
  const act = useAction();
  const readOnly = !canEdit("contract", !!c);
  const submit = async (e: Submit) => {
    e.preventDefault();
    await act.run(async () => {
      const body = {
        ...(c ? { id: c.id } : {}),
        code,
        name,
        description: description || null,
        labels: Object.fromEntries(
          labels
            .split("\n")
            .map((l) => l.trim())
            .filter(Boolean)
            .map((l) => [l.split("=")[0]!.trim(), l.slice(l.indexOf("=") + 1).trim()]),
        ),
        inputSchema: parseJSON(input, t("Input schema")) ?? null,
        outputSchema: parseJSON(output, t("Output schema")) ?? null,
        isEnabled: enabled,
      };
      await itg(c ? "contract/update" : "contract/create", body);
      onClose(true);
    });
  };
  return (
    <EditorDialog title={c ? c.code : t("New contract")} onClose={() => onClose(false)} onSubmit={submit} act={act} readOnly={readOnly} isNew={!c}>
      <div class="cols">
        <div>
          <CodeName code={code} name={name} onCode={setCode} onName={setName} />
          <Field label={t("Description")}>
            <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          </Field>
          <Field label={t("Labels")} hint={t("One key=value a line")}>
            <textarea class="mono" rows={3} value={labels} onInput={(e) => setLabels(e.currentTarget.value)} />
          </Field>
          <EnabledCheck value={enabled} onChange={setEnabled} />
        </div>
        <div>
          <Field label={t("Input schema")} hint={t("JSON Schema (draft 2020-12); empty accepts anything")}>
            <textarea name="inputSchema" class="mono" rows={8} value={input} onInput={(e) => setInput(e.currentTarget.value)} />
          </Field>
          <Field label={t("Output schema")}>
            <textarea name="outputSchema" class="mono" rows={8} value={output} onInput={(e) => setOutput(e.currentTarget.value)} />
          </Field>
        </div>
      </div>
    </EditorDialog>
  );
}

// Routes: route key and contract ("" = every contract) to a system.
import { useState } from "preact/hooks";
import { t } from "../../i18n";
import { Field, useAction, type Submit } from "../../ui";
import { itg, type Route } from "./api";
import { DefSelect, useNames, type Names } from "./adapters";
import { canEdit, DefList, EditorDialog, Enabled, EnabledCheck, Mono, SearchBox } from "./crud";

export function Routes() {
  const names = useNames();
  const [query, setQuery] = useState("");
  return (
    <DefList
      resource="route"
      perm="route"
      filter={query ? { routeKey: query } : {}}
      title={<SearchBox label={t("Search routes")} placeholder={t("Search by route key")} onSearch={setQuery} />}
      newLabel={t("New route")}
      headings={[t("Route key"), t("Contract"), t("System"), t("State")]}
      rowAttrs={(r) => ({ "data-route": `${r.routeKey}/${names.contract(r.contractId)}` })}
      row={(r) => [
        <Mono>{r.routeKey === "" ? t("(default)") : r.routeKey}</Mono>,
        <Mono>{r.contractId ? names.contract(r.contractId) : t("every contract")}</Mono>,
        <Mono>{names.system(r.systemId)}</Mono>,
        <Enabled on={r.isEnabled} />,
      ]}
      empty={t("No routes.")}
      confirm={() => t("Delete this route?")}
      deleted={() => t("Route deleted.")}
      editor={(r, close) => <RouteEditor route={r} names={names} onClose={close} />}
    />
  );
}

function RouteEditor({ route: r, names, onClose }: { route: Route | null; names: Names; onClose: (saved: boolean) => void }) {
  const [routeKey, setRouteKey] = useState(r?.routeKey ?? "");
  const [contractId, setContractId] = useState(r?.contractId ?? "");
  const [systemId, setSystemId] = useState(r?.systemId ?? "");
  const [enabled, setEnabled] = useState(r?.isEnabled ?? true);
  const act = useAction();
  const submit = async (e: Submit) => {
    e.preventDefault();
    const body = { ...(r ? { id: r.id } : {}), routeKey, contractId, systemId, isEnabled: enabled };
    if (await act.run(() => itg(r ? "route/update" : "route/create", body))) onClose(true);
  };
  return (
    <EditorDialog title={r ? t("Route") : t("New route")} onClose={() => onClose(false)} onSubmit={submit} act={act} readOnly={!canEdit("route", !!r)} isNew={!r}>
      <Field label={t("Route key")} hint={t("Empty is the default route")}>
        <input class="mono" value={routeKey} onInput={(e) => setRouteKey(e.currentTarget.value)} />
      </Field>
      <Field label={t("Contract")}>
        <DefSelect label={t("Contract")} items={names.contracts} value={contractId} onChange={setContractId} any={t("every contract")} />
      </Field>
      <Field label={t("System")}>
        <DefSelect label={t("System")} required items={names.systems} value={systemId} onChange={setSystemId} />
      </Field>
      <EnabledCheck value={enabled} onChange={setEnabled} />
    </EditorDialog>
  );
}

// Integration: systems, contracts, adapters (with a JavaScript editor), the test bench, the
// invocation log with charts, routes and code maps — each tab shown with its query permission.
import { useState } from "preact/hooks";
import { t, tk, useLang } from "../../i18n";
import { P } from "../../perms";
import { can } from "../../session";
import { Systems } from "./systems";
import { Contracts } from "./contracts";
import { Adapters } from "./adapters";
import { Bench, type BenchTarget } from "./bench";
import { Log } from "./log";
import { Routes } from "./routes";
import { CodeMaps } from "./codemaps";
import "./integration.css";

type Tab = "systems" | "contracts" | "adapters" | "bench" | "log" | "routes" | "codemaps";

const TABS: { tab: Tab; label: string; visible: () => boolean }[] = [
  { tab: "systems", label: tk("Systems"), visible: () => can(P.itgSystemQuery) },
  { tab: "contracts", label: tk("Contracts"), visible: () => can(P.itgContractQuery) },
  { tab: "adapters", label: tk("Adapters"), visible: () => can(P.itgAdapterQuery) },
  {
    tab: "bench",
    label: tk("Test bench"),
    visible: () => can(P.itgDryRun) || can(P.itgDryRunInbound) || can(P.itgTestConnection) || can(P.itgDiagnose),
  },
  { tab: "log", label: tk("Invocation log"), visible: () => can(P.itgLogQuery) },
  { tab: "routes", label: tk("Routes"), visible: () => can(P.itgRouteQuery) },
  { tab: "codemaps", label: tk("Code maps"), visible: () => can(P.itgCodeMapQuery) },
];

/** integrationVisible tells the navigation whether any tab of the page may be shown. */
export const integrationVisible = () => TABS.some((x) => x.visible());

export function Integration() {
  useLang();
  const tabs = TABS.filter((x) => x.visible());
  const [tab, setTab] = useState<Tab>(tabs[0]?.tab ?? "systems");
  const [target, setTarget] = useState<BenchTarget>({});
  const bench = (to: BenchTarget) => {
    setTarget(to);
    setTab("bench");
  };
  return (
    <div class="page">
      <h1>{t("Integration")}</h1>
      <div class="tabs" role="tablist">
        {tabs.map((x) => (
          <button key={x.tab} type="button" role="tab" aria-selected={tab === x.tab} onClick={() => setTab(x.tab)}>
            {t(x.label)}
          </button>
        ))}
      </div>
      {tab === "systems" && <Systems onBench={bench} />}
      {tab === "contracts" && <Contracts />}
      {tab === "adapters" && <Adapters onBench={bench} />}
      {tab === "bench" && <Bench initial={target} />}
      {tab === "log" && <Log />}
      {tab === "routes" && <Routes />}
      {tab === "codemaps" && <CodeMaps />}
    </div>
  );
}

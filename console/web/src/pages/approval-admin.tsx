// Approval administration: flows and their versions (publish, activate/deactivate, the
// definition as a read-only graph), all instances and tasks with filters (terminate, reassign),
// the metrics as bar charts, categories and delegations. Each part shows only with the
// permission token its operations require.
import { useEffect, useState } from "preact/hooks";
import { call } from "../api";
import type { AdminInstance, AdminTask, BusinessProjection, Category, Flow, VersionSummary as Version } from "../api/ops.gen";
import { at, t, tk, useLang } from "../i18n";
import { P } from "../perms";
import { can } from "../session";
import { Card, Dialog, EmptyRow, ErrorBox, Field, ListStatus, PagedTable, StatusFilter, Table, useAction, useAsync } from "../ui";
import { FlowGraph, type GraphNode } from "../graph";
import { openInstance, statusBadge, STATUSES } from "./approval";
import { UserPicker } from "../pickers";
import { Categories, Delegations, flatten, FormDialog } from "./approval-settings";

/** FlowSchema is the part of a version's flowSchema (the designer's document, unknown to the
 * operation map) the read-only graph draws. */
interface FlowSchema {
  nodes?: { id: string; kind: string; position: { x: number; y: number }; data?: { name?: string } }[];
  edges?: { id: string; source: string; target: string }[];
}

/** Statuses of business projections (wire-approval §4), in the order the metrics show them. */
const PROJECTION_STATUSES = [tk("pending"), tk("processing"), tk("applied"), tk("failed")];

/** averageCompletion renders avgCompletionSeconds: the server's -1 means no instance has finished. */
function averageCompletion(secs: number): string {
  return secs < 0 ? t("Average completion: — (no finished instances)") : t("Average completion: {s} s", { s: secs.toFixed(1) });
}

const SIZE = 15;
type Part = "flows" | "instances" | "tasks" | "metrics" | "records" | "categories" | "delegations";

export function ApprovalAdmin() {
  useLang();
  const parts: [Part, string, boolean][] = [
    ["flows", t("Flows"), can(P.approvalFlowQuery)],
    ["instances", t("Instances"), can(P.approvalInstanceQuery)],
    ["tasks", t("Tasks"), can(P.approvalTaskQuery)],
    ["metrics", t("Metrics"), can(P.approvalMetrics)],
    ["records", t("Business records"), can(P.approvalBindingQuery)],
    ["categories", t("Categories"), can(P.approvalCategoryQuery)],
    ["delegations", t("Delegations"), can(P.approvalDelegationQuery)],
  ];
  const shown = parts.filter((p) => p[2]);
  const [part, setPart] = useState<Part>(shown[0]?.[0] ?? "flows");
  return (
    <>
      <div class="tabs sub" role="tablist" aria-label={t("Administration")}>
        {shown.map(([k, label]) => (
          <button key={k} type="button" role="tab" aria-selected={part === k} onClick={() => setPart(k)}>
            {label}
          </button>
        ))}
      </div>
      {part === "flows" && <Flows />}
      {part === "instances" && <Instances />}
      {part === "tasks" && <Tasks />}
      {part === "metrics" && <MetricsView />}
      {part === "records" && <Records />}
      {part === "categories" && <Categories />}
      {part === "delegations" && <Delegations />}
    </>
  );
}

function Flows() {
  const [page, setPage] = useState(1);
  const [keyword, setKeyword] = useState("");
  const [q, setQ] = useState("");
  const list = useAsync(() => call("approval/flow/find_flows", { keyword: q, page, pageSize: SIZE }), [q, page]);
  const [open, setOpen] = useState<Flow | null>(null);
  const [form, setForm] = useState<Flow | null>(null);
  const [creating, setCreating] = useState(false);
  const [designing, setDesigning] = useState<Flow | null>(null);
  const act = useAction();
  if (designing) return <DesignerPage flow={designing} onClose={() => (setDesigning(null), list.reload())} />;
  const toggle = (f: Flow) =>
    act.run(() => call("approval/flow/toggle_active", { flowId: f.id, isActive: !f.isActive }), f.isActive ? t("{name} deactivated.", { name: f.name }) : t("{name} activated.", { name: f.name })).then((ok) => ok && list.reload());
  return (
    <Card
      title={
        <form class="search" role="search" onSubmit={(e) => (e.preventDefault(), setPage(1), setQ(keyword.trim()))}>
          <label>
            <span class="sr-only">{t("Flow name")}</span>
            <input type="search" placeholder={t("Flow name")} value={keyword} onInput={(e) => setKeyword(e.currentTarget.value)} />
          </label>
          <button type="submit">{t("Filter")}</button>
        </form>
      }
    >
      <p class="muted">{t("Design a flow with Design: the designer saves the original framework's flow document, so flows from the original's designer open here too.")}</p>
      {can(P.approvalFlowCreate) && (
        <div class="row-actions">
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            {t("New flow")}
          </button>
        </div>
      )}
      <PagedTable
        list={list} act={act}
        page={page}
        size={SIZE}
        onPage={setPage}
        headings={[t("Flow"), t("Code"), t("Published version"), t("State")]}
        actions
        empty={t("No flows.")}
        row={(f) => (
          <tr key={f.id} data-flow={f.code}>
            <td>{f.name}</td>
            <td class="mono">{f.code}</td>
            <td>{f.currentVersion || "–"}</td>
            <td>
              <span class={f.isActive ? "badge ok" : "badge"}>{f.isActive ? t("active") : t("inactive")}</span>
            </td>
            <td class="row-actions">
              <button type="button" onClick={() => setOpen(f)}>
                {t("Versions")}
              </button>
              {can(P.approvalFlowDeploy) && (
                <>
                  <button type="button" data-design={f.code} onClick={() => setDesigning(f)}>
                    {t("Design")}
                  </button>
                  <button type="button" onClick={() => setForm(f)}>
                    {t("Form")}
                  </button>
                </>
              )}
              {can(P.approvalFlowUpdate) && (
                <button type="button" disabled={act.busy} onClick={() => void toggle(f)}>
                  {f.isActive ? t("Deactivate") : t("Activate")}
                </button>
              )}
            </td>
          </tr>
        )}
      />
      {open && <FlowDialog flow={open} onClose={() => (setOpen(null), list.reload())} />}
      {form && <FormDialog flow={form} onClose={() => (setForm(null), list.reload())} />}
      {creating && <NewFlowDialog onClose={() => setCreating(false)} onCreated={(f) => (setCreating(false), setDesigning(f))} />}
    </Card>
  );
}

type DesignerModule = typeof import("../designer/designer");
let designerModule: DesignerModule | null = null; // once loaded, later opens render it at once

/** DesignerPage loads the flow designer on demand (its own chunk) and shows it. */
function DesignerPage({ flow, onClose }: { flow: Flow; onClose: () => void }) {
  const [mod, setMod] = useState<DesignerModule | null>(designerModule);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!mod) import("../designer/designer").then((m) => setMod((designerModule = m)), setError);
  }, []);
  if (error) return <ErrorBox error={error} />;
  if (!mod) return <p class="muted">{t("Loading…")}</p>;
  return <mod.Designer key={flow.id} flow={flow} onClose={onClose} />;
}

/** categoryOptions lists the category tree as options, children indented under parents. */
const categoryOptions = (cs: (Category | null)[]): [string, string][] =>
  flatten(cs).map(([c, depth]) => [c.id, `${"  ".repeat(depth)}${c.name}`]);

/** NewFlowDialog creates a flow (standalone, anyone may start it) and opens it in the designer. */
function NewFlowDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (f: Flow) => void }) {
  const cats = useAsync(() => call("approval/category/find_tree"), []);
  const [v, setV] = useState({ name: "", code: "", categoryId: "" });
  const act = useAction();
  const options = categoryOptions(cats.data ?? []);
  const submit = (e: Event) => {
    e.preventDefault();
    let made: Flow | null = null;
    void act
      .run(async () => {
        made = await call("approval/flow/create", {
          tenantId: "", code: v.code.trim(), name: v.name.trim(), categoryId: v.categoryId || options[0]?.[0] || "",
          bindingMode: "standalone", isAllInitiationAllowed: true, instanceTitleTemplate: "",
        });
      })
      .then((ok) => ok && made && onCreated(made));
  };
  return (
    <Dialog title={t("New flow")} onClose={onClose}>
      <ListStatus list={cats} act={act} />
      {cats.data && !options.length && <p class="muted">{t("Create a category first (Categories).")}</p>}
      <form onSubmit={submit}>
        <Field label={t("Name")}>
          <input required value={v.name} onInput={(e) => setV({ ...v, name: e.currentTarget.value })} />
        </Field>
        <Field label={t("Code")} hint={t("Letters, digits and _; it never changes.")}>
          <input required class="mono" value={v.code} onInput={(e) => setV({ ...v, code: e.currentTarget.value })} />
        </Field>
        <Field label={t("Category")}>
          <select value={v.categoryId || options[0]?.[0] || ""} onChange={(e) => setV({ ...v, categoryId: e.currentTarget.value })}>
            {options.map(([id, name]) => (
              <option key={id} value={id}>
                {name}
              </option>
            ))}
          </select>
        </Field>
        <div class="row-actions">
          <button type="submit" class="primary" disabled={act.busy || !options.length}>
            {t("Create and design")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function FlowDialog({ flow, onClose }: { flow: Flow; onClose: () => void }) {
  const versions = useAsync(() => call("approval/flow/find_versions", { flowId: flow.id }), [flow.id]);
  const [versionId, setVersionId] = useState<string>("");
  const graph = useAsync(() => call("approval/flow/get_graph", { flowId: flow.id, versionId: versionId || undefined }), [flow.id, versionId]);
  const act = useAction();
  const publish = (v: Version) =>
    act.run(() => call("approval/flow/publish_version", { versionId: v.id }), t("Version {n} published.", { n: v.version })).then((ok) => ok && (versions.reload(), graph.reload()));
  const schema = graph.data?.version?.flowSchema as FlowSchema | null | undefined;
  const nodes: GraphNode[] = (schema?.nodes ?? []).map((n) => ({ id: n.id, kind: n.kind, position: n.position, name: n.data?.name ?? n.id, status: "" }));
  return (
    <Dialog title={flow.name} onClose={onClose} wide>
      <ListStatus list={versions} act={act} />
      {versions.data && (
        <Table headings={[t("Version"), t("Status"), t("Created"), t("Published")]} actions>
          {versions.data.map((v) => (
            <tr key={v.id} data-version={v.version}>
              <td>{v.version}</td>
              <td>
                <span class={v.status === "published" ? "badge ok" : "badge"}>{t(v.status)}</span>
              </td>
              <td>{at(v.createdAt)}</td>
              <td>{at(v.publishedAt)}</td>
              <td class="row-actions">
                <button type="button" onClick={() => setVersionId(v.id)} aria-pressed={graph.data?.version?.id === v.id}>
                  {t("Graph")}
                </button>
                {v.status === "draft" && can(P.approvalFlowPublish) && (
                  <button type="button" disabled={act.busy} onClick={() => void publish(v)}>
                    {t("Publish")}
                  </button>
                )}
              </td>
            </tr>
          ))}
          {!versions.data.length && <EmptyRow cols={5} text={t("No versions deployed.")} />}
        </Table>
      )}
      <h3>{graph.data?.version ? t("Definition of version {n} (read-only)", { n: graph.data.version.version }) : t("Definition")}</h3>
      <ListStatus list={graph} />
      {graph.data && !graph.data.version && <p class="muted">{t("No published version.")}</p>}
      {graph.data?.version && <FlowGraph nodes={nodes} edges={schema?.edges ?? []} label={t("The flow's definition")} />}
    </Dialog>
  );
}

function Instances() {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState("");
  const [keyword, setKeyword] = useState("");
  const [filter, setFilter] = useState({ status: "", keyword: "" });
  const list = useAsync(() => call("approval/admin/find_instances", { ...filter, page, pageSize: SIZE }), [filter, page]);
  const [ending, setEnding] = useState<AdminInstance | null>(null);
  return (
    <Card
      title={
        <form class="search" role="search" onSubmit={(e) => (e.preventDefault(), setPage(1), setFilter({ status, keyword: keyword.trim() }))}>
          <StatusFilter statuses={STATUSES.slice(0, 6)} value={status} onChange={setStatus} />
          <label>
            <span class="sr-only">{t("Title")}</span>
            <input type="search" placeholder={t("Title")} value={keyword} onInput={(e) => setKeyword(e.currentTarget.value)} />
          </label>
          <button type="submit">{t("Filter")}</button>
        </form>
      }
    >
      <PagedTable
        list={list}
        page={page}
        size={SIZE}
        onPage={setPage}
        headings={[t("Title"), t("Number"), t("Flow"), t("Applicant"), t("Status"), t("Current node"), t("Started")]}
        actions
        empty={t("No instances.")}
        row={(r) => (
          <tr key={r.instanceId} data-instance={r.instanceId}>
            <td>{r.title}</td>
            <td class="mono">{r.instanceNo}</td>
            <td>{r.flowName}</td>
            <td>{r.applicant.name}</td>
            <td>
              <span class={statusBadge(r.status)}>{t(r.status)}</span>
            </td>
            <td>{r.currentNodeName ?? "–"}</td>
            <td>{at(r.createdAt)}</td>
            <td class="row-actions">
              {can(P.approvalInstanceDetail) && (
                <button type="button" onClick={() => openInstance(r.instanceId, true)}>
                  {t("Open")}
                </button>
              )}
              {can(P.approvalTerminate) && r.status === "running" && (
                <button type="button" class="danger" onClick={() => setEnding(r)}>
                  {t("Terminate")}
                </button>
              )}
            </td>
          </tr>
        )}
      />
      {ending && (
        <Reason
          title={t("Terminate {name}", { name: ending.title })}
          run={(reason) => call("approval/admin/terminate_instance", { instanceId: ending.instanceId, reason })}
          onClose={(ok) => (setEnding(null), ok && list.reload())}
        />
      )}
    </Card>
  );
}

/** Reason asks for a reason (and optionally a user id) and runs the command with them. */
function Reason(props: { title: string; user?: boolean; run: (reason: string, user: string) => Promise<unknown>; onClose: (ok: boolean) => void }) {
  const [reason, setReason] = useState("");
  const [user, setUser] = useState("");
  const act = useAction();
  return (
    <Dialog title={props.title} onClose={() => props.onClose(false)}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void act.run(() => props.run(reason.trim(), user.trim())).then((ok) => ok && props.onClose(true));
        }}
      >
        <ErrorBox error={act.error} />
        {props.user && (
          <Field label={t("New assignee")}>
            <UserPicker value={user} onChange={setUser} />
          </Field>
        )}
        <Field label={t("Reason")}>
          <textarea rows={2} value={reason} required onInput={(e) => setReason(e.currentTarget.value)} />
        </Field>
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy || !reason.trim() || (props.user && !user)}>
            {t("Confirm")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function Tasks() {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState("");
  const [filter, setFilter] = useState("");
  const list = useAsync(() => call("approval/admin/find_tasks", { status: filter, page, pageSize: SIZE }), [filter, page]);
  const [moving, setMoving] = useState<AdminTask | null>(null);
  return (
    <Card
      title={
        <form class="search" role="search" onSubmit={(e) => (e.preventDefault(), setPage(1), setFilter(status))}>
          <StatusFilter statuses={["pending", "waiting", "approved", "rejected", "handled", "transferred", "rolled_back", "canceled", "removed", "skipped"]} value={status} onChange={setStatus} />
          <button type="submit">{t("Filter")}</button>
        </form>
      }
    >
      <PagedTable
        list={list}
        page={page}
        size={SIZE}
        onPage={setPage}
        headings={[t("Title"), t("Flow"), t("Node"), t("Assignee"), t("Status"), t("Since")]}
        actions
        empty={t("No tasks.")}
        row={(r) => (
          <tr key={r.taskId}>
            <td>{r.instanceTitle}</td>
            <td>{r.flowName}</td>
            <td>{r.nodeName}</td>
            <td>{r.assignee.name}</td>
            <td>
              <span class={statusBadge(r.status)}>{t(r.status)}</span>
            </td>
            <td>{at(r.createdAt)}</td>
            <td>
              {can(P.approvalReassign) && r.status === "pending" && (
                <button type="button" onClick={() => setMoving(r)}>
                  {t("Reassign")}
                </button>
              )}
            </td>
          </tr>
        )}
      />
      {moving && (
        <Reason
          title={t("Reassign {name}", { name: moving.instanceTitle })}
          user
          run={(reason, user) => call("approval/admin/reassign_task", { taskId: moving.taskId, newAssigneeId: user, reason })}
          onClose={(ok) => (setMoving(null), ok && list.reload())}
        />
      )}
    </Card>
  );
}

/** Bars is a horizontal bar chart of counts by status, each bar labelled with its number. */
function Bars({ counts, label }: { counts: Record<string, number>; label: string }) {
  const rows = Object.entries(counts);
  const max = Math.max(1, ...rows.map(([, n]) => n));
  return (
    <svg class="bars" viewBox={`0 0 320 ${rows.length * 24}`} role="img" aria-label={label}>
      {rows.map(([k, n], i) => (
        <g key={k} transform={`translate(0 ${i * 24})`}>
          <text x="0" y="15" class="bar-label">
            {t(k)}
          </text>
          <rect x="110" y="4" height="14" width={Math.max(1, (n / max) * 170)} class={`bar ${k}`} />
          <text x={116 + (n / max) * 170} y="15" class="bar-value">
            {n}
          </text>
        </g>
      ))}
    </svg>
  );
}

function MetricsView() {
  const m = useAsync(() => call("approval/admin/get_metrics"), []);
  return (
    <>
      <ListStatus list={m} />
      {m.data && (
        <div class="grid2">
          <Card title={t("Instances by status")}>
            <Bars counts={m.data.instanceCounts} label={t("Instances by status")} />
          </Card>
          <Card title={t("Tasks by status")}>
            <Bars counts={m.data.taskCounts} label={t("Tasks by status")} />
            <p>
              {t("Overdue tasks: {n}", { n: m.data.timeoutTaskCount })} · {averageCompletion(m.data.avgCompletionSeconds)}
            </p>
          </Card>
          <Card title={t("Business records")}>
            <Bars
              counts={Object.fromEntries(PROJECTION_STATUSES.map((k) => [k, m.data!.businessProjectionCounts[k] ?? 0]))}
              label={t("Business records")}
            />
            <p class={m.data.pendingBindingFailures > 0 ? "bad" : undefined}>
              {t("Not written: {n}, of which failed: {f}", { n: m.data.pendingBusinessProjections, f: m.data.pendingBindingFailures })}
            </p>
            {m.data.pendingBindingFailures > 0 && <p class="muted">{t("Repair the host's records, then retry them (docs/approval.md, \"When the host's record is gone\").")}</p>}
          </Card>
        </div>
      )}
    </>
  );
}

/** Records lists the business projections (find_business_projections), the failed ones by default, with Retry now. */
function Records() {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState("failed");
  const [filter, setFilter] = useState("failed");
  const list = useAsync(() => call("approval/admin/find_business_projections", { status: filter, page, pageSize: SIZE }), [filter, page]);
  const act = useAction();
  const retry = (r: BusinessProjection) =>
    act.run(() => call("approval/admin/retry_business_projection", { projectionId: r.projectionId }), t("The record will be written at the next scan.")).then((ok) => ok && list.reload());
  return (
    <Card
      title={
        <form class="search" role="search" onSubmit={(e) => (e.preventDefault(), setPage(1), setFilter(status))}>
          <StatusFilter statuses={PROJECTION_STATUSES} value={status} onChange={setStatus} />
          <button type="submit">{t("Filter")}</button>
        </form>
      }
    >
      <PagedTable
        list={list}
        act={act}
        page={page}
        size={SIZE}
        onPage={setPage}
        headings={[t("Business record"), t("Instance state"), t("Status"), t("Attempts"), t("Last error"), t("Changed")]}
        actions
        empty={t("No business records.")}
        row={(r) => (
          <tr key={r.projectionId} data-projection={r.projectionId}>
            <td class="mono">
              {r.businessTable} {Object.entries(r.recordKey).map(([k, v]) => `${k}=${v}`).join(", ")}
            </td>
            <td>{t(r.desiredStatus)}</td>
            <td>
              <span class={r.status === "failed" ? "badge bad" : r.status === "applied" ? "badge ok" : "badge"}>{t(r.status)}</span>
            </td>
            <td>{r.attemptCount}</td>
            <td class="mono">{r.lastError ?? "–"}</td>
            <td>{at(r.updatedAt)}</td>
            <td class="row-actions">
              {can(P.approvalInstanceDetail) && (
                <button type="button" onClick={() => openInstance(r.ownerInstanceId, true)}>
                  {t("Open")}
                </button>
              )}
              {can(P.approvalBindingRetry) && r.status !== "applied" && (
                <button type="button" disabled={act.busy} onClick={() => void retry(r)}>
                  {t("Retry now")}
                </button>
              )}
            </td>
          </tr>
        )}
      />
    </Card>
  );
}

// Approval: my work (the inbox, tasks done, instances I started, copies to me), starting a flow
// from its form, an instance's detail with the flow drawn as a graph and the actions my task
// allows — and, with the admin permissions, flows and versions, all instances and tasks, the
// metrics, categories and delegations. Only approval/* operations of /api.
import { useEffect, useState } from "preact/hooks";
import { ApiError, call, type Params, type Result } from "../api";
import type { InstanceDetail, InstanceDetailInfo, InstanceInfo, MyCCRecord } from "../api/ops.gen";
import { at, t, tk, useLang } from "../i18n";
import { P } from "../perms";
import { can } from "../session";
import { Card, Dialog, EmptyRow, ErrorBox, Field, ListStatus, Notice, PagedTable, Table, useAction, useAsync, useInterval } from "../ui";
import { FlowGraph, type GraphNode } from "../graph";
import { Form, parseForm, validate, type FormData } from "./approval-form";
import { ApprovalAdmin } from "./approval-admin";
import { UserPicker } from "../pickers";

/** NOT_FOUND is /api's answer to an operation the server does not have (404/1200). */
const NOT_FOUND = 1200;

/** Detail is an instance's detail as approval/my and approval/admin answer it (the admin's has
 * no actions, permissions or task of the viewer). */
export type Detail = Omit<InstanceDetail, "instance" | "availableActions"> & {
  instance: InstanceInfo | InstanceDetailInfo;
  availableActions?: string[];
};


const SIZE = 15;
/** Statuses of instances and tasks as the server names them. */
export const STATUSES = [
  tk("running"), tk("approved"), tk("rejected"), tk("withdrawn"), tk("returned"), tk("terminated"),
  tk("waiting"), tk("handled"), tk("transferred"), tk("rolled_back"), tk("removed"),
];
export const statusBadge = (s: string) =>
  s === "approved" || s === "handled" || s === "passed" ? "badge ok" : s === "rejected" || s === "terminated" ? "badge bad" : "badge";

/** openInstance shows an instance's detail (admin: through approval/admin). */
export function openInstance(id: string, admin = false): void {
  window.location.hash = `#/approval?instance=${encodeURIComponent(id)}${admin ? "&admin=1" : ""}`;
}

function hashParams(): URLSearchParams {
  return new URLSearchParams(window.location.hash.split("?")[1] ?? "");
}

// ---- the inbox count in the navigation, and whether the server has the approval module ----
let count: number | null = null;
let absent = false;
const countSubs = new Set<(n: number | null) => void>();
const presenceSubs = new Set<() => void>();

/** approvalPresent is false once the server answered that it has no approval/my (a host without the module). */
export const approvalPresent = (): boolean => !absent;

/** useApprovalPresence re-renders the caller when the server turns out to have no approval module. */
export function useApprovalPresence(): void {
  const [, set] = useState(0);
  useEffect(() => {
    const on = () => set((n) => n + 1);
    presenceSubs.add(on);
    return () => void presenceSubs.delete(on);
  }, []);
}

/** refreshCount reads the caller's pending task count again (after a decision, every 30 s). */
export function refreshCount(): void {
  call("approval/my/get_pending_counts").then(
    (c) => {
      count = c.pendingTaskCount;
      countSubs.forEach((s) => s(count));
    },
    (e) => {
      if (e instanceof ApiError && e.code === NOT_FOUND && !absent) {
        absent = true;
        presenceSubs.forEach((s) => s());
      }
    },
  );
}

/** InboxCount is the navigation's badge: the caller's pending approval tasks. */
export function InboxCount() {
  const [n, set] = useState(count);
  useEffect(() => {
    countSubs.add(set);
    refreshCount();
    return () => void countSubs.delete(set);
  }, []);
  useInterval(refreshCount, 30_000);
  if (!n) return null;
  return (
    <span class="nav-count" aria-label={t("{n} pending", { n })} data-count={n}>
      {n}
    </span>
  );
}

type Tab = "inbox" | "done" | "started" | "copies" | "start" | "admin";

export function Approval() {
  useLang();
  const [, setTick] = useState(0);
  useEffect(() => {
    const on = () => setTick((n) => n + 1);
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  const q = hashParams();
  const [tab, setTab] = useState<Tab>((q.get("tab") as Tab) || "inbox");
  const instance = q.get("instance");
  if (instance) return <InstanceDetail id={instance} admin={q.get("admin") === "1"} />;
  const admin = can(P.approvalFlowQuery) || can(P.approvalInstanceQuery) || can(P.approvalMetrics);
  const tabs: [Tab, string][] = [
    ["inbox", t("Inbox")],
    ["done", t("Done")],
    ["started", t("Started by me")],
    ["copies", t("Copies to me")],
    ["start", t("Start")],
  ];
  if (admin) tabs.push(["admin", t("Administration")]);
  return (
    <div class="page">
      <h1>{t("Approval")}</h1>
      <div class="tabs" role="tablist">
        {tabs.map(([k, label]) => (
          <button key={k} type="button" role="tab" aria-selected={tab === k} onClick={() => setTab(k)}>
            {label}
          </button>
        ))}
      </div>
      {tab === "inbox" && <Inbox />}
      {tab === "done" && <Done />}
      {tab === "started" && <Started />}
      {tab === "copies" && <Copies />}
      {tab === "start" && <Start />}
      {tab === "admin" && <ApprovalAdmin />}
    </div>
  );
}

/** MyList is a paged list of approval/my. */
type MyList = "find_pending_tasks" | "find_completed_tasks" | "find_initiated" | "find_cc_records";

/** useMyPage loads one page of an approval/my list. */
function useMyPage<A extends MyList>(action: A, extra: Params<`approval/my/${A}`> = {} as Params<`approval/my/${A}`>) {
  const [page, setPage] = useState(1);
  // One cast: TypeScript does not resolve an operation name built from a type parameter.
  const op = `approval/my/${action}` as "approval/my/find_pending_tasks";
  const list = useAsync(() => call(op, { ...extra, page, pageSize: SIZE }) as Promise<Result<`approval/my/${A}`>>, [page, JSON.stringify(extra)]);
  return { list, page, setPage };
}

function Open({ id, label }: { id: string; label: string }) {
  return (
    <button type="button" onClick={() => openInstance(id)} aria-label={label}>
      {t("Open")}
    </button>
  );
}

function Inbox() {
  const { list, page, setPage } = useMyPage("find_pending_tasks");
  return (
    <Card title={t("Pending tasks")} actions={<button type="button" onClick={list.reload}>{t("Refresh")}</button>}>
      <PagedTable
        list={list}
        page={page}
        size={SIZE}
        onPage={setPage}
        headings={[t("Title"), t("Flow"), t("Node"), t("Applicant"), t("Since"), t("Deadline")]}
        actions
        empty={t("Nothing waits for you.")}
        row={(r) => (
          <tr key={r.taskId} data-task={r.taskId} data-instance={r.instanceId}>
            <td>
              {r.instanceTitle || r.instanceNo}
              {r.isTimeout && <span class="badge bad">{t("overdue")}</span>}
            </td>
            <td>{r.flowName}</td>
            <td>{r.nodeName}</td>
            <td>{r.applicant.name}</td>
            <td>{at(r.createdAt)}</td>
            <td>{at(r.deadline)}</td>
            <td>
              <Open id={r.instanceId} label={t("Open {name}", { name: r.instanceTitle || r.instanceNo })} />
            </td>
          </tr>
        )}
      />
    </Card>
  );
}

function Done() {
  const { list, page, setPage } = useMyPage("find_completed_tasks");
  return (
    <Card title={t("Tasks done")}>
      <PagedTable
        list={list}
        page={page}
        size={SIZE}
        onPage={setPage}
        headings={[t("Title"), t("Flow"), t("Node"), t("Applicant"), t("Outcome"), t("Finished")]}
        actions
        empty={t("No tasks done yet.")}
        row={(r) => (
          <tr key={r.taskId}>
            <td>{r.instanceTitle || r.instanceNo}</td>
            <td>{r.flowName}</td>
            <td>{r.nodeName}</td>
            <td>{r.applicant.name}</td>
            <td>
              <span class={statusBadge(r.status)}>{t(r.status)}</span>
            </td>
            <td>{at(r.finishedAt)}</td>
            <td>
              <Open id={r.instanceId} label={t("Open {name}", { name: r.instanceTitle || r.instanceNo })} />
            </td>
          </tr>
        )}
      />
    </Card>
  );
}

function Started() {
  const { list, page, setPage } = useMyPage("find_initiated");
  return (
    <Card title={t("Started by me")}>
      <PagedTable
        list={list}
        page={page}
        size={SIZE}
        onPage={setPage}
        headings={[t("Title"), t("Number"), t("Flow"), t("Status"), t("Current node"), t("Started")]}
        actions
        empty={t("You have started no instance.")}
        row={(r) => (
          <tr key={r.instanceId} data-instance={r.instanceId}>
            <td>{r.title}</td>
            <td class="mono">{r.instanceNo}</td>
            <td>{r.flowName}</td>
            <td>
              <span class={statusBadge(r.status)}>{t(r.status)}</span>
            </td>
            <td>{r.currentNodeName ?? "–"}</td>
            <td>{at(r.createdAt)}</td>
            <td>
              <Open id={r.instanceId} label={t("Open {name}", { name: r.title })} />
            </td>
          </tr>
        )}
      />
    </Card>
  );
}

function Copies() {
  const { list, page, setPage } = useMyPage("find_cc_records");
  const act = useAction();
  const read = (r: MyCCRecord) =>
    act.run(async () => {
      if (!r.isRead && can(P.approvalCC)) await call("approval/instance/mark_cc_read", { instanceId: r.instanceId });
      openInstance(r.instanceId);
    });
  return (
    <Card title={t("Copies to me")}>
      <PagedTable
        list={list} act={act}
        page={page}
        size={SIZE}
        onPage={setPage}
        headings={[t("Title"), t("Flow"), t("Node"), t("Applicant"), t("Received"), t("Read")]}
        actions
        empty={t("No copies.")}
        row={(r) => (
          <tr key={r.ccRecordId}>
            <td>{r.instanceTitle || r.instanceNo}</td>
            <td>{r.flowName}</td>
            <td>{r.nodeName ?? "–"}</td>
            <td>{r.applicant.name}</td>
            <td>{at(r.createdAt)}</td>
            <td>{r.isRead ? t("yes") : <span class="badge">{t("new")}</span>}</td>
            <td>
              <button type="button" onClick={() => void read(r)}>
                {t("Open")}
              </button>
            </td>
          </tr>
        )}
      />
    </Card>
  );
}

function Start() {
  const flows = useAsync(() => call("approval/my/find_available_flows", { page: 1, pageSize: 100 }), []);
  const [code, setCode] = useState<string | null>(null);
  return (
    <>
      <Card title={t("Flows I may start")}>
        <ListStatus list={flows} />
        {flows.data && (
          <Table headings={[t("Flow"), t("Category"), t("Description")]} actions>
            {flows.data.items.map((f) => (
              <tr key={f.flowId} data-flow={f.flowCode}>
                <td>{f.flowName}</td>
                <td>{f.categoryName}</td>
                <td>{f.description ?? "–"}</td>
                <td>
                  {can(P.approvalStart) && (
                    <button type="button" onClick={() => setCode(f.flowCode)} aria-label={t("Start {name}", { name: f.flowName })}>
                      {t("Start")}
                    </button>
                  )}
                </td>
              </tr>
            ))}
            {!flows.data.items.length && <EmptyRow cols={4} text={t("No flow you may start.")} />}
          </Table>
        )}
      </Card>
      {code && <StartDialog code={code} onClose={() => setCode(null)} />}
    </>
  );
}

function StartDialog({ code, onClose }: { code: string; onClose: () => void }) {
  const form = useAsync(() => call("approval/my/get_start_form", { flowCode: code }), [code]);
  const fields = parseForm(form.data?.formSchema);
  const [data, setData] = useState<FormData>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const act = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const bad = validate(fields, data);
    setErrors(bad);
    if (Object.keys(bad).length) return;
    void act.run(async () => {
      const r = await call("approval/instance/start", { flowCode: code, formData: data });
      onClose();
      openInstance(r.id);
    });
  };
  return (
    <Dialog title={form.data ? t("Start {name}", { name: form.data.flowName }) : t("Start")} onClose={onClose} wide>
      <ListStatus list={form} act={act} />
      {form.data && (
        <form onSubmit={submit} noValidate>
          <p class="muted">{t("Version {n}", { n: form.data.version })}</p>
          <Form fields={fields} data={data} onChange={setData} errors={errors} />
          <div class="actions">
            <button type="submit" class="primary" disabled={act.busy}>
              {t("Submit")}
            </button>
            <button type="button" onClick={onClose}>
              {t("Cancel")}
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

/** graphNodes are the progress graph's nodes; once the instance is over, a node never reached shows as skipped. */
export function graphNodes(d: Detail): GraphNode[] {
  const over = d.instance.status !== "running";
  return d.flowGraph.nodes.map((n) => ({
    id: n.id,
    kind: n.kind,
    position: n.position,
    name: n.data.name,
    status: over && n.data.status === "pending" ? "skipped" : n.data.status,
  }));
}

function InstanceDetail({ id, admin }: { id: string; admin: boolean }) {
  useLang();
  const d = useAsync(() => call(admin ? "approval/admin/get_instance_detail" : "approval/my/get_instance_detail", { instanceId: id }), [id, admin]);
  const back = () => (window.location.hash = "#/approval");
  return (
    <div class="page">
      <p>
        <button type="button" onClick={back}>
          ← {t("Back")}
        </button>
      </p>
      <ListStatus list={d} />
      {d.data && <DetailView d={d.data} admin={admin} reload={d.reload} />}
    </div>
  );
}

function DetailView({ d, admin, reload }: { d: Detail; admin: boolean; reload: () => void }) {
  const fields = parseForm(d.formSchema);
  const i = d.instance;
  return (
    <>
      <h1>
        {i.title} <span class={statusBadge(i.status)} data-instance-status={i.status}>{t(i.status)}</span>
      </h1>
      <dl class="facts">
        <dt>{t("Number")}</dt>
        <dd class="mono">{i.instanceNo}</dd>
        <dt>{t("Flow")}</dt>
        <dd>{i.flowName}</dd>
        <dt>{t("Applicant")}</dt>
        <dd>{i.applicant.name}</dd>
        <dt>{t("Started")}</dt>
        <dd>{at(i.createdAt)}</dd>
        <dt>{t("Current node")}</dt>
        <dd>{i.currentNodeName ?? "–"}</dd>
        <dt>{t("Finished")}</dt>
        <dd>{at(i.finishedAt)}</dd>
      </dl>
      {!admin && d.myTask && <TaskPanel d={d} fields={fields} onDone={reload} />}
      {!admin && !d.myTask && <InstanceActions d={d} fields={fields} onDone={reload} />}
      <Card title={t("Progress")}>
        <FlowGraph nodes={graphNodes(d)} edges={d.flowGraph.edges} label={t("The flow with the instance's progress")} />
      </Card>
      <Card title={t("Form")}>
        <Form fields={fields} data={i.formData ?? {}} />
      </Card>
      <Card title={t("Timeline")}>
        <ol class="timeline">
          {d.timeline.map((e, k) => (
            <li key={k} data-kind={e.kind}>
              <strong>{e.name ?? t(e.kind)}</strong> {e.status && <span class={statusBadge(e.status)}>{t(e.status)}</span>}{" "}
              <span class="muted">{at(e.startedAt)}</span>
              {(e.participants ?? []).map((p) => (
                <div key={p.taskId} class="who-did">
                  {p.user.name}: <span class={statusBadge(p.status)}>{t(p.status)}</span>
                  {p.transferTo && ` → ${p.transferTo.name}`}
                  {p.opinion && <q>{p.opinion}</q>} <span class="muted">{at(p.actionTime)}</span>
                </div>
              ))}
              {(e.activities ?? []).map((a, j) => (
                <div key={j} class="who-did">
                  {a.operator.name}: {t(a.action)} {a.opinion && <q>{a.opinion}</q>} <span class="muted">{at(a.createdAt)}</span>
                </div>
              ))}
            </li>
          ))}
        </ol>
      </Card>
    </>
  );
}

/** Side actions and decisions, as the server names them in availableActions. */
export const ACTIONS = [
  tk("approve"), tk("handle"), tk("reject"), tk("transfer"), tk("rollback"), tk("add_assignee"), tk("remove_assignee"),
  tk("withdraw"), tk("resubmit"), tk("add_cc"), tk("urge"), tk("submit"), tk("reassign"), tk("terminate"), tk("execute"),
];

function InstanceActions({ d, fields, onDone }: { d: Detail; fields: ReturnType<typeof parseForm>; onDone: () => void }) {
  const act = useAction();
  const [data, setData] = useState<FormData>(d.instance.formData ?? {});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [cc, setCC] = useState<string[]>([]);
  const offered = (a: string, perm: string) => !!d.availableActions?.includes(a) && can(perm);
  const waiting = d.timeline.flatMap((e) => (e.participants ?? []).filter((p) => p.status === "pending"));
  const urge = offered("urge", P.approvalUrge) ? waiting : [];
  const run = (fn: () => Promise<unknown>, done: string) => void act.run(fn, done).then((ok) => ok && onDone());
  const id = d.instance.instanceId;
  if (!offered("withdraw", P.approvalWithdraw) && !offered("resubmit", P.approvalResubmit) && !offered("add_cc", P.approvalCC) && !urge.length && !act.notice) return null;
  return (
    <Card title={t("Actions")}>
      <ErrorBox error={act.error} />
      <Notice text={act.notice} />
      {offered("resubmit", P.approvalResubmit) && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const bad = validate(fields, data);
            setErrors(bad);
            if (!Object.keys(bad).length) run(() => call("approval/instance/resubmit", { instanceId: id, formData: data }), t("Resubmitted."));
          }}
        >
          <p class="muted">{t("The instance came back to you: correct the form and submit it again.")}</p>
          <Form fields={fields} data={data} onChange={setData} errors={errors} />
          <div class="actions">
            <button type="submit" class="primary" disabled={act.busy}>
              {t("Resubmit")}
            </button>
          </div>
        </form>
      )}
      {offered("withdraw", P.approvalWithdraw) && (
        <button type="button" disabled={act.busy} onClick={() => run(() => call("approval/instance/withdraw", { instanceId: id }), t("Withdrawn."))}>
          {t("Withdraw")}
        </button>
      )}
      {urge.map((p) => (
        <button key={p.taskId} type="button" disabled={act.busy} onClick={() => run(() => call("approval/instance/urge_task", { taskId: p.taskId }), t("{name} was reminded.", { name: p.user.name }))}>
          {t("Urge {name}", { name: p.user.name })}
        </button>
      ))}
      {offered("add_cc", P.approvalCC) && (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            run(() => call("approval/instance/add_cc", { instanceId: id, ccUserIds: cc }), t("Copies sent."));
          }}
        >
          <Field label={t("Send a copy to")}>
            <UserPicker multiple value={cc} onChange={setCC} />
          </Field>
          <button type="submit" disabled={act.busy || !cc.length}>
            {t("Send copies")}
          </button>
        </form>
      )}
    </Card>
  );
}

function TaskPanel({ d, fields, onDone }: { d: Detail; fields: ReturnType<typeof parseForm>; onDone: () => void }) {
  const task = d.myTask!;
  const actions = d.availableActions ?? [];
  const [opinion, setOpinion] = useState("");
  const [data, setData] = useState<FormData>(d.instance.formData ?? {});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [transferTo, setTransferTo] = useState("");
  const [target, setTarget] = useState(task.rollbackTargets?.[0]?.nodeId ?? "");
  const [addIds, setAddIds] = useState<string[]>([]);
  const [addType, setAddType] = useState(task.addAssigneeTypes?.[0] ?? "");
  const [remove, setRemove] = useState(task.removableAssignees?.[0]?.taskId ?? "");
  const act = useAction();
  const editable = Object.entries(d.fieldPermissions ?? {}).some(([, p]) => p === "editable" || p === "required");

  const done = (ok: boolean) => {
    if (!ok) return;
    refreshCount();
    onDone();
  };
  const decide = (action: string, extra: Record<string, unknown> = {}) => {
    if (task.isOpinionRequired && !opinion.trim() && (action === "approve" || action === "handle" || action === "reject")) {
      act.setError(new Error(t("An opinion is required at this node.")));
      return;
    }
    if (editable && action !== "reject") {
      const bad = validate(fields, data, d.fieldPermissions);
      setErrors(bad);
      if (Object.keys(bad).length) return;
    }
    const formData = editable ? Object.fromEntries(Object.entries(data).filter(([k]) => ["editable", "required"].includes(d.fieldPermissions?.[k] ?? ""))) : undefined;
    void act
      .run(() => call("approval/instance/process_task", { taskId: task.taskId, action, opinion, formData, ...extra }), t("Done: {action}.", { action: t(action) }))
      .then(done);
  };
  const decision = actions.includes("handle") ? "handle" : "approve";
  return (
    <Card title={t("Your task")}>
      <ErrorBox error={act.error} />
      <Notice text={act.notice} />
      {editable && <Form fields={fields} data={data} onChange={setData} perms={d.fieldPermissions} errors={errors} />}
      <Field label={task.isOpinionRequired ? t("Opinion (required)") : t("Opinion")}>
        <textarea rows={2} value={opinion} onInput={(e) => setOpinion(e.currentTarget.value)} />
      </Field>
      <div class="actions">
        <button type="button" class="primary" disabled={act.busy} onClick={() => decide(decision)}>
          {decision === "handle" ? t("Handle") : t("Approve")}
        </button>
        {actions.includes("reject") && (
          <button type="button" class="danger" disabled={act.busy} onClick={() => decide("reject")}>
            {t("Reject")}
          </button>
        )}
      </div>
      {actions.includes("transfer") && (
        <form class="inline" onSubmit={(e) => (e.preventDefault(), decide("transfer", { transferToId: transferTo.trim() }))}>
          <Field label={t("Hand over to (user id)")}>
            <input value={transferTo} required onInput={(e) => setTransferTo(e.currentTarget.value)} />
          </Field>
          <button type="submit" disabled={act.busy || !transferTo.trim()}>
            {t("Hand over")}
          </button>
        </form>
      )}
      {actions.includes("rollback") && (
        <form class="inline" onSubmit={(e) => (e.preventDefault(), decide("rollback", { targetNodeId: target }))}>
          <Field label={t("Roll back to")}>
            <select value={target} onChange={(e) => setTarget(e.currentTarget.value)}>
              {task.rollbackTargets!.map((r) => (
                <option key={r.nodeId} value={r.nodeId}>
                  {r.name}
                </option>
              ))}
            </select>
          </Field>
          <button type="submit" disabled={act.busy}>
            {t("Roll back")}
          </button>
        </form>
      )}
      {actions.includes("add_assignee") && (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void act.run(() => call("approval/instance/add_assignee", { taskId: task.taskId, userIds: addIds, addType }), t("Assignees added.")).then(done);
          }}
        >
          <Field label={t("Add assignees")}>
            <UserPicker multiple value={addIds} onChange={setAddIds} />
          </Field>
          <Field label={t("Where")}>
            <select value={addType} onChange={(e) => setAddType(e.currentTarget.value)}>
              {task.addAssigneeTypes!.map((a) => (
                <option key={a} value={a}>
                  {t(a)}
                </option>
              ))}
            </select>
          </Field>
          <button type="submit" disabled={act.busy || !addIds.length}>
            {t("Add")}
          </button>
        </form>
      )}
      {actions.includes("remove_assignee") && (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void act.run(() => call("approval/instance/remove_assignee", { taskId: remove }), t("Assignee removed.")).then(done);
          }}
        >
          <Field label={t("Remove assignee")}>
            <select value={remove} onChange={(e) => setRemove(e.currentTarget.value)}>
              {task.removableAssignees!.map((r) => (
                <option key={r.taskId} value={r.taskId}>
                  {r.assignee.name}
                </option>
              ))}
            </select>
          </Field>
          <button type="submit" disabled={act.busy}>
            {t("Remove")}
          </button>
        </form>
      )}
    </Card>
  );
}

/** Where an added assignee goes, as the server names it. */
export const ADD_TYPES = [tk("before"), tk("after"), tk("parallel")];

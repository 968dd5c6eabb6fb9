// Approval administration's settings: categories (create, rename, move under another parent,
// order, activate, delete) and delegations (create, edit, delete, with the user picker), both
// on the approval/category and approval/delegation operations; and the loader of the form
// designer, which is its own chunk (fetched when a flow's form is first opened).
import { useEffect, useState } from "preact/hooks";
import { call } from "../api";
import type { Category, Delegation, Flow } from "../api/ops.gen";
import { at, t } from "../i18n";
import { P } from "../perms";
import { UserPicker } from "../pickers";
import { can } from "../session";
import { Card, Dialog, EmptyRow, ErrorBox, Field, ListStatus, Notice, PagedTable, Table, useAction, useAsync } from "../ui";
import "./approval-settings.css";

const SIZE = 15;

/** flatten lists the category tree depth first, each category with its depth. */
export function flatten(cs: readonly (Category | null)[], depth = 0, out: [Category, number][] = []): [Category, number][] {
  for (const c of cs) {
    if (!c) continue;
    out.push([c, depth]);
    flatten(c.children ?? [], depth + 1, out);
  }
  return out;
}

/** below answers the ids of c and every category under it (none of them can be c's parent). */
function below(c: Category, out = new Set<string>()): Set<string> {
  out.add(c.id);
  (c.children ?? []).forEach((k) => k && below(k, out));
  return out;
}

/** ActiveCell is a row's active/inactive badge. */
function ActiveCell({ active }: { active: boolean }) {
  return (
    <td>
      <span class={active ? "badge ok" : "badge"}>{active ? t("active") : t("inactive")}</span>
    </td>
  );
}

/** EditDelete is a row's Edit and Delete buttons, each shown when given (false: not allowed). */
function EditDelete(props: { busy: boolean; edit: false | (() => void); remove: false | (() => void) }) {
  return (
    <td class="row-actions">
      {props.edit && (
        <button type="button" onClick={props.edit}>
          {t("Edit")}
        </button>
      )}
      {props.remove && (
        <button type="button" class="danger" disabled={props.busy} onClick={props.remove}>
          {t("Delete")}
        </button>
      )}
    </td>
  );
}

/** ActiveSave is an edit dialog's last lines: the active check box and the Save button. */
function ActiveSave(props: { active: boolean; onActive: (v: boolean) => void; disabled: boolean }) {
  return (
    <>
      <label class="check-line">
        <input type="checkbox" checked={props.active} onChange={(e) => props.onActive(e.currentTarget.checked)} />
        {t("active")}
      </label>
      <div class="actions">
        <button type="submit" class="primary" disabled={props.disabled}>
          {t("Save")}
        </button>
      </div>
    </>
  );
}

/** Categories lists the category tree; each can be edited (name, code, parent, order, state) or
 * deleted, and the form below creates one. */
export function Categories() {
  const tree = useAsync(() => call("approval/category/find_tree"), []);
  const [editing, setEditing] = useState<Category | "new" | null>(null);
  const act = useAction();
  const [saved, setSaved] = useState<string | null>(null);
  const all = tree.data ? flatten(tree.data) : [];
  const remove = (c: Category) => act.run(() => call("approval/category/delete", { id: c.id }), t("{name} deleted.", { name: c.name })).then((ok) => ok && tree.reload());
  return (
    <Card
      title={t("Categories")}
      actions={
        can(P.approvalCategoryCreate) && (
          <button type="button" class="primary" onClick={() => setEditing("new")}>
            {t("New category")}
          </button>
        )
      }
    >
      <ListStatus list={tree} act={act} />
      <Notice text={saved} />
      {tree.data && (
        <Table headings={[t("Name"), t("Code"), t("Order"), t("State")]} actions>
          {all.map(([c, depth]) => (
            <tr key={c.id} data-category={c.code}>
              <td class={`indent-${Math.min(depth, 4)}`}>{c.name}</td>
              <td class="mono">{c.code}</td>
              <td>{c.sortOrder}</td>
              <ActiveCell active={c.isActive} />
              <EditDelete busy={act.busy} edit={can(P.approvalCategoryUpdate) && (() => setEditing(c))} remove={can(P.approvalCategoryDelete) && (() => void remove(c))} />
            </tr>
          ))}
          {!all.length && <EmptyRow cols={5} text={t("No categories.")} />}
        </Table>
      )}
      {editing && <CategoryDialog category={editing === "new" ? null : editing} all={all} onClose={(done) => (setEditing(null), done && (setSaved(done), tree.reload()))} />}
    </Card>
  );
}

/** CategoryDialog edits c (null: a new one); onClose gets what was done, or null (closed; the
 * <dialog> also reports its closing when it leaves the page). */
function CategoryDialog({ category: c, all, onClose }: { category: Category | null; all: [Category, number][]; onClose: (done: string | null) => void }) {
  const [form, setForm] = useState({
    name: c?.name ?? "",
    code: c?.code ?? "",
    parentId: c?.parentId ?? "",
    sortOrder: String(c?.sortOrder ?? 0),
    isActive: c?.isActive ?? true,
    remark: c?.remark ?? "",
  });
  const act = useAction();
  const barred = c ? below(c) : new Set<string>();
  const set = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
  const save = (e: Event) => {
    e.preventDefault();
    const params = {
      code: form.code.trim(),
      name: form.name.trim(),
      icon: c?.icon ?? null,
      parentId: form.parentId || null,
      sortOrder: Number(form.sortOrder) || 0,
      isActive: form.isActive,
      remark: form.remark.trim() || null,
    };
    void act.run(() => (c ? call("approval/category/update", { ...params, id: c.id }) : call("approval/category/create", params))).then((ok) => ok && onClose(c ? t("{name} saved.", { name: params.name }) : t("{name} created.", { name: params.name })));
  };
  return (
    <Dialog title={c ? t("Edit {name}", { name: c.name }) : t("New category")} onClose={() => onClose(null)}>
      <form onSubmit={save}>
        <ErrorBox error={act.error} />
        <Field label={t("Name")}>
          <input value={form.name} required maxLength={128} onInput={set("name")} />
        </Field>
        <Field label={t("Code")}>
          <input value={form.code} required maxLength={64} class="mono" onInput={set("code")} />
        </Field>
        <Field label={t("Parent")}>
          <select value={form.parentId} onChange={set("parentId")}>
            <option value="">{t("None (top level)")}</option>
            {all
              .filter(([k]) => !barred.has(k.id))
              .map(([k, depth]) => (
                <option key={k.id} value={k.id}>
                  {"— ".repeat(depth)}
                  {k.name}
                </option>
              ))}
          </select>
        </Field>
        <Field label={t("Order")} hint={t("Smaller comes first among its siblings.")}>
          <input type="number" value={form.sortOrder} onInput={set("sortOrder")} />
        </Field>
        <Field label={t("Remark")}>
          <input value={form.remark} maxLength={256} onInput={set("remark")} />
        </Field>
        <ActiveSave active={form.isActive} onActive={(isActive) => setForm({ ...form, isActive })} disabled={act.busy || !form.name.trim() || !form.code.trim()} />
      </form>
    </Dialog>
  );
}

// datetime-local is the browser's wall clock; the server takes and answers RFC 3339.
const iso = (v: string) => (v ? new Date(v).toISOString() : undefined);
function local(s: string | null): string {
  if (!s) return "";
  const d = new Date(s);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** Delegations lists the delegations; each can be edited or deleted, and a new one created,
 * the people chosen with the user picker. */
export function Delegations() {
  const [page, setPage] = useState(1);
  const list = useAsync(() => call("approval/delegation/find_page", {}, { meta: { page, size: SIZE } }), [page]);
  const act = useAction();
  const [editing, setEditing] = useState<Delegation | "new" | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const remove = (d: Delegation) => act.run(() => call("approval/delegation/delete", { id: d.id }), t("Delegation deleted.")).then((ok) => ok && list.reload());
  return (
    <Card
      title={t("Delegations")}
      actions={
        can(P.approvalDelegationCreate) && (
          <button type="button" class="primary" onClick={() => setEditing("new")}>
            {t("New delegation")}
          </button>
        )
      }
    >
      <Notice text={saved} />
      <PagedTable
        list={list}
        act={act}
        page={page}
        size={SIZE}
        onPage={setPage}
        headings={[t("Delegator"), t("Delegate"), t("Flow"), t("From"), t("Until"), t("State"), t("Reason")]}
        actions
        empty={t("No delegations.")}
        row={(d) => (
          <tr key={d.id} data-delegation={d.id}>
            <td>
              <UserName id={d.delegatorId} />
            </td>
            <td>
              <UserName id={d.delegateeId} />
            </td>
            <td class="mono">{d.flowId ?? d.flowCategoryId ?? t("every flow")}</td>
            <td>{at(d.startsAt)}</td>
            <td>{at(d.endsAt)}</td>
            <ActiveCell active={d.isActive} />
            <td>{d.reason ?? "–"}</td>
            <EditDelete busy={act.busy} edit={can(P.approvalDelegationUpdate) && (() => setEditing(d))} remove={can(P.approvalDelegationDelete) && (() => void remove(d))} />
          </tr>
        )}
      />
      {editing && <DelegationDialog d={editing === "new" ? null : editing} onClose={(done) => (setEditing(null), done && (setSaved(done), list.reload()))} />}
    </Card>
  );
}

const names = new Map<string, Promise<string>>();

/** UserName shows a user's display name (the id while it loads, or when it cannot be read). */
function UserName({ id }: { id: string }) {
  const [name, setName] = useState(id);
  useEffect(() => {
    if (!can(P.userQuery)) return;
    let live = true;
    if (!names.has(id)) names.set(id, call("security/user/get", { id }).then((u) => u.displayName || u.username, () => id));
    void names.get(id)!.then((n) => live && setName(n));
    return () => {
      live = false;
    };
  }, [id]);
  return <span title={id}>{name}</span>;
}

/** DelegationDialog edits d (null: a new one); onClose gets what was done, or null. */
function DelegationDialog({ d, onClose }: { d: Delegation | null; onClose: (done: string | null) => void }) {
  const [form, setForm] = useState({
    delegatorId: d?.delegatorId ?? "",
    delegateeId: d?.delegateeId ?? "",
    flowCategoryId: d?.flowCategoryId ?? "",
    flowId: d?.flowId ?? "",
    startsAt: local(d?.startsAt ?? null),
    endsAt: local(d?.endsAt ?? null),
    isActive: d?.isActive ?? true,
    reason: d?.reason ?? "",
  });
  const scopes = useAsync(async () => {
    const [cats, flows] = await Promise.all([
      can(P.approvalCategoryQuery) ? call("approval/category/find_tree").then((c) => flatten(c)) : Promise.resolve([] as [Category, number][]),
      can(P.approvalFlowQuery) ? call("approval/flow/find_flows", { page: 1, pageSize: 100 }).then((p) => p.items) : Promise.resolve([] as Flow[]),
    ]);
    return { cats, flows };
  }, []);
  const act = useAction();
  const set = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
  const save = (e: Event) => {
    e.preventDefault();
    const params = {
      delegatorId: form.delegatorId || undefined,
      delegateeId: form.delegateeId,
      flowCategoryId: form.flowCategoryId || null,
      flowId: form.flowId || null,
      startsAt: iso(form.startsAt),
      endsAt: iso(form.endsAt),
      isActive: form.isActive,
      reason: form.reason.trim() || null,
    };
    void act
      .run(() => (d ? call("approval/delegation/update", { ...params, id: d.id }) : call("approval/delegation/create", params)))
      .then((ok) => ok && onClose(d ? t("Delegation saved.") : t("Delegation created.")));
  };
  return (
    <Dialog title={d ? t("Edit delegation") : t("New delegation")} onClose={() => onClose(null)}>
      <form onSubmit={save}>
        <ErrorBox error={act.error} />
        <Field label={t("Delegator")} hint={d ? t("A delegation keeps its delegator.") : t("Left empty: you. Only an approval super-admin names someone else; for anyone else the server takes the caller.")}>
          <UserPicker value={form.delegatorId} onChange={(v) => setForm({ ...form, delegatorId: v })} disabled={!!d} />
        </Field>
        <Field label={t("Delegate")}>
          <UserPicker value={form.delegateeId} onChange={(v) => setForm({ ...form, delegateeId: v })} />
        </Field>
        <Field label={t("Category")}>
          <select value={form.flowCategoryId} onChange={set("flowCategoryId")}>
            <option value="">{t("Every category")}</option>
            {(scopes.data?.cats ?? []).map(([c, depth]) => (
              <option key={c.id} value={c.id}>
                {"— ".repeat(depth)}
                {c.name}
              </option>
            ))}
            {form.flowCategoryId && !scopes.data?.cats.some(([c]) => c.id === form.flowCategoryId) && <option value={form.flowCategoryId}>{form.flowCategoryId}</option>}
          </select>
        </Field>
        <Field label={t("Flow")}>
          <select value={form.flowId} onChange={set("flowId")}>
            <option value="">{t("every flow")}</option>
            {(scopes.data?.flows ?? []).map((f) => (
              <option key={f.id} value={f.id}>
                {f.name}
              </option>
            ))}
            {form.flowId && !scopes.data?.flows.some((f) => f.id === form.flowId) && <option value={form.flowId}>{form.flowId}</option>}
          </select>
        </Field>
        <div class="apv-pair">
          <Field label={t("From")}>
            <input type="datetime-local" value={form.startsAt} required onInput={set("startsAt")} />
          </Field>
          <Field label={t("Until")}>
            <input type="datetime-local" value={form.endsAt} required onInput={set("endsAt")} />
          </Field>
        </div>
        <Field label={t("Reason")}>
          <input value={form.reason} maxLength={256} onInput={set("reason")} />
        </Field>
        <ActiveSave active={form.isActive} onActive={(isActive) => setForm({ ...form, isActive })} disabled={act.busy || !form.delegateeId || !form.startsAt || !form.endsAt} />
      </form>
    </Dialog>
  );
}

type Designer = typeof import("./approval-formdesign");

/** FormDialog opens the form designer of flow (its code is fetched the first time). */
export function FormDialog({ flow, onClose }: { flow: Flow; onClose: () => void }) {
  const [mod, setMod] = useState<Designer | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    import("./approval-formdesign").then(setMod, setError);
  }, []);
  if (mod) return <mod.FormDesignDialog flow={flow} onClose={onClose} />;
  return error ? <ErrorBox error={error} /> : null;
}

// The designer's properties panel: every setting package approval/design validates, per node
// kind. A setting the document leaves out shows its designer default (wire-approval §5) and is
// written only once changed, so an untouched node is saved exactly as it was read.
import type { ComponentChildren } from "preact";
import { t, tk } from "../i18n";
import { DepartmentPicker, RolePicker, UserPicker } from "../pickers";
import { branchesOf, reorderBranch, type Branch, type Json, type JsonObject, type MNode, type Model } from "./model";

/** FormFieldRef is a top-level form field as validate_design projects it. */
export interface FormFieldRef {
  key: string;
  label: string;
  kind: string;
  columns?: { key: string; label: string; kind: string }[] | null;
}

export interface PropsPanelProps {
  model: Model;
  node: MNode;
  fields: FormFieldRef[];
  problems: string[];
  onData: (data: JsonObject) => void;
  onConnect: (target: string, handle?: string) => void;
  onBranches: (branches: Branch[]) => void;
}

type Opt = [value: string, label: string];
const opts = (...vs: [string, string][]): Opt[] => vs;

const EXECUTION = opts(["manual", tk("Manual")], ["auto_pass", tk("Pass automatically")], ["auto_reject", tk("Reject automatically")]);
const METHOD = opts(["parallel", tk("Parallel (all at once)")], ["sequential", tk("Sequential (one after another)")]);
const PASS = opts(["all", tk("All must approve")], ["any", tk("Any one approves")], ["ratio", tk("A share approves")]);
const EMPTY = opts(
  ["auto_pass", tk("Pass automatically")],
  ["transfer_admin", tk("Hand to the flow's admins")],
  ["transfer_superior", tk("Hand to the applicant's superior")],
  ["transfer_applicant", tk("Hand to the applicant")],
  ["transfer_specified", tk("Hand to chosen users")],
);
const SAME = opts(["self_approve", tk("The applicant decides")], ["auto_pass", tk("Pass automatically")], ["transfer_superior", tk("Hand to the applicant's superior")], ["exclude", tk("Leave the applicant out")]);
const CONSEC = opts(["none", tk("Decide again")], ["auto_pass", tk("Pass automatically")]);
const ROLLBACK = opts(["previous", tk("The previous node")], ["start", tk("The start (the applicant)")], ["any", tk("Any node passed")], ["specified", tk("Chosen nodes")], ["none", tk("No rollback")]);
const ROLLBACK_DATA = opts(["keep", tk("Keep the form data")], ["clear", tk("Clear the form data")]);
const TIMEOUT = opts(["none", tk("Nothing")], ["notify", tk("Remind")], ["auto_pass", tk("Pass automatically")], ["auto_reject", tk("Reject automatically")], ["transfer_admin", tk("Hand to the flow's admins")]);
const ASSIGNEE = opts(
  ["user", tk("Users")],
  ["role", tk("Roles")],
  ["department", tk("Departments")],
  ["self", tk("The applicant")],
  ["superior", tk("The applicant's superior")],
  ["department_leader", tk("The department's leader")],
  ["form_field", tk("A form field")],
);
const CC_KIND = opts(["user", tk("Users")], ["role", tk("Roles")], ["department", tk("Departments")], ["form_field", tk("A form field")]);
const TIMING = opts(["always", tk("Always")], ["on_approve", tk("When approved")], ["on_reject", tk("When rejected")]);
const PERMS = opts(["", tk("Read-only (default)")], ["hidden", tk("Hidden")], ["visible", tk("Read-only")], ["editable", tk("Editable")], ["required", tk("Required")]);
const ADD_TYPES = opts(["before", tk("Before me")], ["after", tk("After me")], ["parallel", tk("Alongside me")]);
const OPERATORS = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in", "contains", "not_contains", "starts_with", "ends_with", "is_empty", "is_not_empty"];
const AGGREGATES = opts(["", tk("None")], ["sum", tk("Sum")], ["count", tk("Count")], ["avg", tk("Average")]);

function Row(props: { label: string; children: ComponentChildren }) {
  return (
    <label class="prop">
      <span>{props.label}</span>
      {props.children}
    </label>
  );
}

function Select(props: { value: string; options: Opt[]; onChange: (v: string) => void; label?: string }) {
  return (
    <select value={props.value} aria-label={props.label} onChange={(e) => props.onChange(e.currentTarget.value)}>
      {props.options.map(([v, l]) => (
        <option key={v} value={v}>
          {t(l)}
        </option>
      ))}
    </select>
  );
}

const str = (v: Json | undefined, def = "") => (typeof v === "string" ? v : v == null ? def : String(v));
const arr = (v: Json | undefined): JsonObject[] => (Array.isArray(v) ? (v as JsonObject[]) : []);
const ids = (v: Json | undefined): string[] => (Array.isArray(v) ? v.map(String) : []);

/** IdPicker picks ids of a kind: users, roles or departments (the pickers of pickers.tsx). */
function IdPicker(props: { kind: string; value: string[]; onChange: (v: string[]) => void; label: string }) {
  const P = props.kind === "role" ? RolePicker : props.kind === "department" ? DepartmentPicker : UserPicker;
  return <P multiple value={props.value} onChange={props.onChange} label={props.label} />;
}

/** Who edits an assignee or cc list: kind, then ids or a form field; cc entries have a timing. */
function Entries(props: { list: JsonObject[]; kinds: Opt[]; fields: FormFieldRef[]; cc?: boolean; timing?: boolean; onChange: (l: JsonObject[]) => void; title: string }) {
  const set = (i: number, e: JsonObject) => props.onChange(props.list.map((x, j) => (j === i ? e : x)));
  return (
    <fieldset class="entries">
      <legend>{props.title}</legend>
      {props.list.map((e, i) => {
        const kind = str(e.kind);
        return (
          <div class="entry" key={i}>
            <Select
              label={t("Kind")}
              value={kind}
              options={props.kinds}
              onChange={(k) => {
                const { ids: _i, formField: _f, ...rest } = e;
                set(i, { ...rest, kind: k, ...(k === "form_field" ? { formField: "" } : ["user", "role", "department"].includes(k) ? { ids: [] } : {}) });
              }}
            />
            {["user", "role", "department"].includes(kind) && <IdPicker kind={kind} value={ids(e.ids)} onChange={(v) => set(i, { ...e, ids: v })} label={t("Who")} />}
            {kind === "form_field" && (
              <Select label={t("Form field")} value={str(e.formField)} options={[["", t("Choose a field")], ...props.fields.map((f) => [f.key, f.label || f.key] as Opt)]} onChange={(v) => set(i, { ...e, formField: v })} />
            )}
            {props.timing && <Select label={t("When")} value={str(e.timing, "always")} options={TIMING} onChange={(v) => set(i, { ...e, timing: v })} />}
            <button type="button" class="icon" aria-label={t("Remove")} onClick={() => props.onChange(props.list.filter((_, j) => j !== i))}>
              ×
            </button>
          </div>
        );
      })}
      <button
        type="button"
        onClick={() => props.onChange([...props.list, props.cc ? { kind: "user", ids: [], timing: "always" } : { kind: "user", ids: [], sortOrder: props.list.length }])}
      >
        {props.cc ? t("Add a recipient") : t("Add an assignee")}
      </button>
    </fieldset>
  );
}

function Permissions(props: { value: JsonObject; fields: FormFieldRef[]; ccNode: boolean; onChange: (v: JsonObject) => void }) {
  if (!props.fields.length) return <p class="muted">{t("The flow has no form fields yet.")}</p>;
  const choices = props.ccNode ? PERMS.filter(([v]) => v === "" || v === "hidden" || v === "visible") : PERMS;
  return (
    <fieldset class="entries">
      <legend>{t("Field permissions")}</legend>
      {props.fields.map((f) => (
        <Row key={f.key} label={f.label || f.key}>
          <Select
            value={str(props.value[f.key])}
            options={choices}
            onChange={(v) => {
              const next = { ...props.value };
              if (v) next[f.key] = v;
              else delete next[f.key];
              props.onChange(next);
            }}
          />
        </Row>
      ))}
    </fieldset>
  );
}

function Toggle(props: { label: string; value: boolean; onChange: (v: boolean) => void }) {
  return (
    <label class="check">
      <input type="checkbox" checked={props.value} onChange={(e) => props.onChange(e.currentTarget.checked)} /> {props.label}
    </label>
  );
}

const num = (s: string): Json => (s.trim() === "" ? 0 : Number(s));

/** parseValue reads a condition value: a JSON literal (number, list, true) when it is one, else text. */
function parseValue(s: string): Json {
  try {
    const v = JSON.parse(s) as Json;
    if (typeof v !== "object" || Array.isArray(v)) return v;
  } catch {
    /* text */
  }
  return s;
}
const showValue = (v: Json | undefined) => (typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v));

function Condition(props: { c: JsonObject; fields: FormFieldRef[]; onChange: (c: JsonObject) => void; onRemove: () => void }) {
  const { c } = props;
  const expr = c.kind === "expression";
  const subjects = [["applicantId", t("Applicant")], ["applicantDepartmentId", t("Applicant's department")], ...props.fields.map((f) => [f.key, f.label || f.key])] as Opt[];
  const table = props.fields.find((f) => f.key === c.subject && f.kind === "table");
  return (
    <div class="entry condition">
      <Select label={t("Condition kind")} value={expr ? "expression" : "field"} options={opts(["field", tk("Field comparison")], ["expression", tk("Expression")])} onChange={(k) => props.onChange(k === "expression" ? { kind: "expression", expression: "" } : { kind: "field", subject: "", operator: "eq", value: "" })} />
      {expr ? (
        <input class="mono" aria-label={t("Expression")} placeholder="formData.amount > 1000" value={str(c.expression)} onInput={(e) => props.onChange({ ...c, expression: e.currentTarget.value })} />
      ) : (
        <>
          <Select label={t("Subject")} value={str(c.subject)} options={[["", t("Choose a field")], ...subjects]} onChange={(v) => props.onChange({ ...c, subject: v })} />
          {table && (
            <>
              <Select label={t("Aggregate")} value={str(c.aggregate)} options={AGGREGATES} onChange={(v) => { const { aggregate: _a, column: _c, ...rest } = c; props.onChange(v ? { ...rest, aggregate: v, ...(v !== "count" ? { column: "" } : {}) } : rest); }} />
              {c.aggregate && c.aggregate !== "count" && (
                <Select label={t("Column")} value={str(c.column)} options={[["", t("Choose a column")], ...(table.columns ?? []).map((x) => [x.key, x.label || x.key] as Opt)]} onChange={(v) => props.onChange({ ...c, column: v })} />
              )}
            </>
          )}
          <Select label={t("Operator")} value={str(c.operator, "eq")} options={OPERATORS.map((o) => [o, o] as Opt)} onChange={(v) => props.onChange({ ...c, operator: v })} />
          <input aria-label={t("Value")} value={showValue(c.value)} onInput={(e) => props.onChange({ ...c, value: parseValue(e.currentTarget.value) })} />
        </>
      )}
      <button type="button" class="icon" aria-label={t("Remove the condition")} onClick={props.onRemove}>
        ×
      </button>
    </div>
  );
}

function Branches(props: PropsPanelProps) {
  const branches = branchesOf(props.node);
  const set = (i: number, b: Branch) => props.onBranches(branches.map((x, j) => (j === i ? b : x)));
  const target = (id: string) => props.model.edges.find((e) => e.source === props.node.id && e.handle === id)?.target ?? "";
  const others = props.model.nodes.filter((n) => n.id !== props.node.id && n.kind !== "start");
  return (
    <>
      {branches.map((b, i) => {
        const groups = b.conditionGroups ?? [];
        const setGroups = (g: { conditions: JsonObject[] }[]) => set(i, { ...b, conditionGroups: g });
        return (
          <fieldset class="entries branch" key={b.id} data-branch={b.id}>
            <legend>
              {b.isDefault ? t("Default branch") : t("Branch {n}", { n: b.priority })} <span class="mono">{b.id}</span>
            </legend>
            <Row label={t("Label")}>
              <input value={b.label} onInput={(e) => set(i, { ...b, label: e.currentTarget.value })} />
            </Row>
            <Row label={t("Leads to")}>
              <Select value={target(b.id)} options={[["", t("Nowhere yet")], ...others.map((n) => [n.id, `${str(n.data?.name) || n.id} (${t(n.kind)})`] as Opt)]} onChange={(v) => props.onConnect(v, b.id)} />
            </Row>
            {!b.isDefault && (
              <div class="row-actions">
                <button type="button" disabled={i === 0} onClick={() => props.onBranches(reorderBranch(branches, i, -1))}>
                  {t("Try earlier")}
                </button>
                <button type="button" disabled={!branches[i + 1] || !!branches[i + 1]?.isDefault} onClick={() => props.onBranches(reorderBranch(branches, i, 1))}>
                  {t("Try later")}
                </button>
                <button type="button" onClick={() => props.onBranches(branches.filter((_, j) => j !== i))}>
                  {t("Remove the branch")}
                </button>
              </div>
            )}
            {!b.isDefault &&
              groups.map((g, gi) => (
                <div class="group" key={gi}>
                  <p class="muted">{gi === 0 ? t("All of these hold:") : t("or all of these hold:")}</p>
                  {g.conditions.map((c, ci) => (
                    <Condition
                      key={ci}
                      c={c}
                      fields={props.fields}
                      onChange={(nc) => setGroups(groups.map((x, k) => (k === gi ? { conditions: x.conditions.map((y, l) => (l === ci ? nc : y)) } : x)))}
                      onRemove={() => setGroups(groups.map((x, k) => (k === gi ? { conditions: x.conditions.filter((_, l) => l !== ci) } : x)).filter((x) => x.conditions.length))}
                    />
                  ))}
                  <button type="button" onClick={() => setGroups(groups.map((x, k) => (k === gi ? { conditions: [...x.conditions, { kind: "field", subject: "", operator: "eq", value: "" }] } : x)))}>
                    {t("And a condition")}
                  </button>
                </div>
              ))}
            {!b.isDefault && (
              <button type="button" onClick={() => setGroups([...groups, { conditions: [{ kind: "field", subject: "", operator: "eq", value: "" }] }])}>
                {t("Or another group")}
              </button>
            )}
          </fieldset>
        );
      })}
      <button
        type="button"
        onClick={() => {
          const used = new Set(branches.map((b) => b.id));
          let n = branches.length + 1;
          while (used.has(`${props.node.id}_b${n}`)) n++;
          const def = branches.filter((b) => b.isDefault);
          const rest = branches.filter((b) => !b.isDefault);
          const nb: Branch = { id: `${props.node.id}_b${n}`, label: "", priority: 0, conditionGroups: [{ conditions: [{ kind: "field", subject: "", operator: "eq", value: "" }] }] };
          let p = 1;
          props.onBranches([...rest, nb].map((b) => ({ ...b, priority: p++ })).concat(def.map((b) => ({ ...b, priority: Math.max(b.priority, p) }))));
        }}
      >
        {t("Add a branch")}
      </button>
    </>
  );
}

/** PropsPanel edits the selected node's settings. */
export function PropsPanel(props: PropsPanelProps) {
  const { node: n, fields } = props;
  const d = n.data ?? {};
  const set = (k: string, v: Json | undefined) => {
    const next = { ...d };
    if (v === undefined) delete next[k];
    else next[k] = v;
    props.onData(next);
  };
  const bool = (k: string, def: boolean) => (typeof d[k] === "boolean" ? (d[k] as boolean) : def);
  const task = n.kind === "approval" || n.kind === "handle";
  const approval = n.kind === "approval";
  const next = props.model.edges.find((e) => e.source === n.id)?.target ?? "";
  const others = props.model.nodes.filter((x) => x.id !== n.id && x.kind !== "start");
  const taskNodes = props.model.nodes.filter((x) => x.id !== n.id && (x.kind === "approval" || x.kind === "handle"));
  const rollbackKeys = ids(d.rollbackTargetKeys);
  const addTypes = Array.isArray(d.addAssigneeTypes) ? ids(d.addAssigneeTypes) : str(d.approvalMethod) === "sequential" ? ["before", "after"] : ["before", "after", "parallel"];
  return (
    <div class="props" data-props={n.id}>
      <h3>
        {t(n.kind)} <span class="mono">{n.id}</span>
      </h3>
      {props.problems.length > 0 && (
        <ul class="problems" role="alert">
          {props.problems.map((p, i) => (
            <li key={i}>{p}</li>
          ))}
        </ul>
      )}
      <Row label={t("Name")}>
        <input value={str(d.name)} onInput={(e) => set("name", e.currentTarget.value)} />
      </Row>
      <Row label={t("Description")}>
        <input value={str(d.description)} onInput={(e) => set("description", e.currentTarget.value || undefined)} />
      </Row>
      {n.kind !== "condition" && n.kind !== "end" && (
        <Row label={t("Next node")}>
          <Select value={next} options={[["", t("Nowhere yet")], ...others.map((x) => [x.id, `${str(x.data?.name) || x.id} (${t(x.kind)})`] as Opt)]} onChange={(v) => props.onConnect(v)} />
        </Row>
      )}
      {n.kind === "condition" && <Branches {...props} />}
      {task && (
        <>
          <Entries title={t("Assignees")} list={arr(d.assignees)} kinds={ASSIGNEE} fields={fields} onChange={(l) => set("assignees", l.map((a, i) => ({ ...a, sortOrder: i })))} />
          <Row label={t("Execution")}>
            <Select value={str(d.executionType, "manual")} options={n.kind === "handle" ? EXECUTION.slice(0, 2) : EXECUTION} onChange={(v) => set("executionType", v)} />
          </Row>
          {approval && (
            <>
              <Row label={t("Approval method")}>
                <Select value={str(d.approvalMethod, "parallel")} options={METHOD} onChange={(v) => set("approvalMethod", v)} />
              </Row>
              <Row label={t("Pass rule")}>
                <Select value={str(d.passRule, "all")} options={PASS} onChange={(v) => set("passRule", v)} />
              </Row>
              {d.passRule === "ratio" && (
                <Row label={t("Share that must approve (%)")}>
                  <input type="number" min={0} max={100} step="any" value={str(d.passRatio)} onInput={(e) => set("passRatio", num(e.currentTarget.value))} />
                </Row>
              )}
            </>
          )}
          <Row label={t("When nobody is assigned")}>
            <Select value={str(d.emptyAssigneeAction, "auto_pass")} options={EMPTY} onChange={(v) => set("emptyAssigneeAction", v)} />
          </Row>
          {d.emptyAssigneeAction === "transfer_specified" && (
            <Row label={t("Hand to")}>
              <UserPicker multiple value={ids(d.fallbackUserIds)} onChange={(v) => set("fallbackUserIds", v)} label={t("Hand to")} />
            </Row>
          )}
          {(d.emptyAssigneeAction === "transfer_admin" || d.timeoutAction === "transfer_admin") && (
            <Row label={t("Admins of this node")}>
              <UserPicker multiple value={ids(d.adminUserIds)} onChange={(v) => set("adminUserIds", v)} label={t("Admins of this node")} />
            </Row>
          )}
          {approval && (
            <>
              <Row label={t("When the applicant is an assignee")}>
                <Select value={str(d.sameApplicantAction, "self_approve")} options={SAME} onChange={(v) => set("sameApplicantAction", v)} />
              </Row>
              <Row label={t("When the previous node's approver is assigned again")}>
                <Select value={str(d.consecutiveApproverAction, "none")} options={CONSEC} onChange={(v) => set("consecutiveApproverAction", v)} />
              </Row>
              <Toggle label={t("Rollback allowed")} value={bool("isRollbackAllowed", true)} onChange={(v) => set("isRollbackAllowed", v)} />
              <Row label={t("Roll back to")}>
                <Select value={str(d.rollbackType, "previous")} options={ROLLBACK} onChange={(v) => set("rollbackType", v)} />
              </Row>
              {(d.rollbackType === "specified" || rollbackKeys.length > 0) && (
                <fieldset class="entries">
                  <legend>{t("Rollback targets")}</legend>
                  {taskNodes.map((x) => (
                    <Toggle key={x.id} label={`${str(x.data?.name) || x.id}`} value={rollbackKeys.includes(x.id)} onChange={(on) => set("rollbackTargetKeys", on ? [...rollbackKeys, x.id] : rollbackKeys.filter((k) => k !== x.id))} />
                  ))}
                </fieldset>
              )}
              <Row label={t("Form data on rollback")}>
                <Select value={str(d.rollbackDataStrategy, "keep")} options={ROLLBACK_DATA} onChange={(v) => set("rollbackDataStrategy", v)} />
              </Row>
              <Toggle label={t("Assignees may be added")} value={bool("isAddAssigneeAllowed", true)} onChange={(v) => set("isAddAssigneeAllowed", v)} />
              <fieldset class="entries">
                <legend>{t("Where added assignees go")}</legend>
                {ADD_TYPES.map(([v, l]) => (
                  <Toggle key={v} label={t(l)} value={addTypes.includes(v)} onChange={(on) => set("addAssigneeTypes", on ? [...addTypes, v] : addTypes.filter((x) => x !== v))} />
                ))}
              </fieldset>
              <Toggle label={t("Assignees may be removed")} value={bool("isRemoveAssigneeAllowed", true)} onChange={(v) => set("isRemoveAssigneeAllowed", v)} />
              <Toggle label={t("Copies may be sent by hand")} value={bool("isManualCcAllowed", true)} onChange={(v) => set("isManualCcAllowed", v)} />
            </>
          )}
          <Toggle label={t("Transfer allowed")} value={bool("isTransferAllowed", true)} onChange={(v) => set("isTransferAllowed", v)} />
          <Toggle label={t("An opinion is required")} value={bool("isOpinionRequired", false)} onChange={(v) => set("isOpinionRequired", v)} />
          <Row label={t("Timeout (hours, 0 = none)")}>
            <input type="number" min={0} value={str(d.timeoutHours, "0")} onInput={(e) => set("timeoutHours", num(e.currentTarget.value))} />
          </Row>
          <Row label={t("On timeout")}>
            <Select value={str(d.timeoutAction, "none")} options={n.kind === "handle" ? TIMEOUT.filter(([v]) => v !== "auto_reject") : TIMEOUT} onChange={(v) => set("timeoutAction", v)} />
          </Row>
          <Row label={t("Remind before the timeout (hours)")}>
            <input type="number" min={0} value={str(d.timeoutNotifyBeforeHours, "0")} onInput={(e) => set("timeoutNotifyBeforeHours", num(e.currentTarget.value))} />
          </Row>
          <Row label={t("Minutes between reminders")}>
            <input type="number" min={0} value={str(d.urgeCooldownMinutes, "30")} onInput={(e) => set("urgeCooldownMinutes", num(e.currentTarget.value))} />
          </Row>
          <Entries title={t("Copies")} cc timing list={arr(d.ccs)} kinds={CC_KIND} fields={fields} onChange={(l) => set("ccs", l)} />
          <Permissions value={(d.fieldPermissions as JsonObject) ?? {}} fields={fields} ccNode={false} onChange={(v) => set("fieldPermissions", v)} />
        </>
      )}
      {n.kind === "cc" && (
        <>
          <Entries title={t("Recipients")} cc list={arr(d.ccs)} kinds={CC_KIND} fields={fields} onChange={(l) => set("ccs", l)} />
          <Toggle label={t("Recipients confirm reading")} value={bool("isReadConfirmRequired", false)} onChange={(v) => set("isReadConfirmRequired", v)} />
          <Permissions value={(d.fieldPermissions as JsonObject) ?? {}} fields={fields} ccNode onChange={(v) => set("fieldPermissions", v)} />
        </>
      )}
    </div>
  );
}

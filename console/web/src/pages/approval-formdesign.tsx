// The start form's designer. FormDesigner edits a form-editor document (the formSchema deploy
// stores; approval/design.ParseFormSchema reads it) through formdoc.ts's model, so what it does
// not edit comes back exactly as it was: a document from the original's designer round-trips.
// The pc presentation is designed here (the mobile one, if any, is kept as it is); Preview
// renders the document with the Start page's own renderer (approval-form.tsx) and checks it
// with its validation. FormDesignDialog deploys a flow's latest definition with the designed
// form as a new draft version (approval/flow/deploy).
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { call } from "../api";
import type { Flow } from "../api/ops.gen";
import {
  edit,
  indent,
  insert,
  isLayout,
  keys,
  move,
  newBlock,
  nodeAt,
  outdent,
  rule,
  staticOptions,
  toDoc,
  toModel,
  widgetKind,
  withOptions,
  withProp,
  withRule,
  WIDGETS,
  type Block,
  type Model,
  type Node,
  type Option,
  type Path,
  type Rule,
} from "../formdoc";
import { t, tk, useLang } from "../i18n";
import { P } from "../perms";
import { can } from "../session";
import { Dialog, Field, ListStatus, Notice, useAction, useAsync } from "../ui";
import { Form, parseForm, validate, type FormData } from "./approval-form";
import "./approval-formdesign.css";

/** The widget types the palette adds, with their names. */
const TYPE_NAMES: Record<string, string> = {
  textfield: tk("Text input"),
  textarea: tk("Text area"),
  "code-editor": tk("Code editor"),
  number: tk("Number input"),
  select: tk("Drop-down list"),
  radio: tk("Radio buttons"),
  "checkbox-group": tk("Check boxes"),
  date: tk("Date"),
  datetime: tk("Date and time"),
  upload: tk("Upload"),
  subform: tk("Table"),
  section: tk("Section"),
  flex: tk("Row"),
  grid: tk("Grid"),
  tabs: tk("Tabs"),
};
const PALETTE = ["textfield", "textarea", "number", "select", "date", "upload", "subform", "section"];
const typeName = (type: unknown) => (TYPE_NAMES[String(type)] ? t(TYPE_NAMES[String(type)]) : String(type ?? "?"));

/** EMPTY_FORM is the document of a new form. */
export const EMPTY_FORM = { version: 2, presentations: { pc: { children: [] } } };

const same = (a: Path, b: Path | null) => !!b && a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * FormDesigner edits the form document value; every change calls onChange with the new
 * document (value itself is never changed). Add fields from the palette (into the selected
 * section, table or at the end), order them with the outline's arrows (↑/↓ among their
 * siblings, →/← into the section above and out of it), set each one's properties and rules, and
 * try the form in Preview.
 */
export function FormDesigner({ value, onChange }: { value: unknown; onChange: (doc: Record<string, unknown>) => void }) {
  useLang();
  const [model, setModel] = useState<Model>(() => toModel(value ?? EMPTY_FORM));
  // Every document this designer handed to onChange (and the first value): the parent passing
  // one of them back is an echo, not a new document. Not only the last one: with quick edits the
  // parent may render an earlier echo after a newer change, which must not reset the editor.
  const sent = useRef(new WeakSet<object>());
  const known = (v: unknown) => typeof v === "object" && v !== null && sent.current.has(v);
  const first = useRef(value);
  const [sel, setSel] = useState<Path | null>(null);
  const [view, setView] = useState<"design" | "preview">("design");
  useEffect(() => {
    if (value !== first.current && !known(value)) {
      first.current = value;
      setModel(toModel(value ?? EMPTY_FORM));
      setSel(null);
    }
  }, [value]);
  const change = (m: Model, select?: Path | null) => {
    setModel(m);
    if (select !== undefined) setSel(select);
    const doc = toDoc(m);
    sent.current.add(doc);
    onChange(doc);
  };
  const doc = useMemo(() => toDoc(model), [model]);
  const selected = sel ? nodeAt(model, sel) : undefined;
  const taken = keys(model.nodes);

  // Where the palette adds: into the selected container (a layout or a table), else at the end.
  const target: Path = selected && (selected.template || selected.children || selected.tabs) ? sel! : [];
  const into = target.length ? nodeAt(model, target) : undefined;
  const add = (type: string) => {
    const m = insert(model, target, newBlock(type, taken));
    const c = target.length ? nodeAt(m, target)! : null;
    let path: Path;
    if (!c) path = [m.nodes.length - 1];
    else if (c.template) path = [...target, "c", c.template.length - 1];
    else if (c.tabs) path = [...target, `t${c.tabs.length - 1}`, c.tabs[c.tabs.length - 1].children.length - 1];
    else path = [...target, c.children!.length - 1];
    change(m, path);
  };
  const allowed = (type: string) => !into?.template || (type !== "subform" && !isLayout({ type }));

  return (
    <div class="fd">
      <div class="tabs sub" role="tablist" aria-label={t("Form designer")}>
        <button type="button" role="tab" aria-selected={view === "design"} onClick={() => setView("design")}>
          {t("Design")}
        </button>
        <button type="button" role="tab" aria-selected={view === "preview"} onClick={() => setView("preview")}>
          {t("Preview")}
        </button>
      </div>
      {view === "preview" ? (
        <Preview doc={doc} />
      ) : (
        <div class="fd-cols">
          <section class="fd-palette" aria-label={t("Add a field")}>
            <h3>{into ? t("Add to {name}", { name: String(into.raw.label || into.raw.key || typeName(into.raw.type)) }) : t("Add a field")}</h3>
            {PALETTE.filter(allowed).map((type) => (
              <button key={type} type="button" onClick={() => add(type)}>
                + {typeName(type)}
              </button>
            ))}
          </section>
          <section class="fd-outline" aria-label={t("Fields")}>
            <h3>{t("Fields")}</h3>
            {model.nodes.length ? (
              <Outline nodes={model.nodes} base={[]} sel={sel} onSelect={setSel} model={model} change={change} />
            ) : (
              <p class="muted">{t("No fields yet: add one from the list.")}</p>
            )}
          </section>
          <section class="fd-props" aria-label={t("Properties")}>
            <h3>{t("Properties")}</h3>
            {selected && sel ? (
              <Props key={selected.uid} node={selected} dupe={duplicated(model, sel)} onChange={(raw) => change(edit(model, sel, (n) => ({ ...n, raw })))} />
            ) : (
              <p class="muted">{t("Choose a field to set its properties.")}</p>
            )}
          </section>
        </div>
      )}
    </div>
  );
}

function Outline(props: { nodes: Node[]; base: Path; sel: Path | null; onSelect: (p: Path) => void; model: Model; change: (m: Model, sel?: Path | null) => void }) {
  const { nodes, base, sel, model, change } = props;
  const moved = (r: { model: Model; path: Path } | null) => r && change(r.model, r.path);
  return (
    <ol class="fd-tree">
      {nodes.map((n, i) => {
        const path = [...base, i];
        const name = String(n.raw.label || n.raw.key || typeName(n.raw.type));
        return (
          <li key={n.uid}>
            <div class={same(path, sel) ? "fd-row selected" : "fd-row"} data-key={String(n.raw.key ?? "")}>
              <button type="button" class="fd-pick" aria-pressed={same(path, sel)} onClick={() => props.onSelect(path)}>
                <span>{name}</span> <span class="badge">{typeName(n.raw.type)}</span>
                {rule(n.raw, "required") === true && <span class="badge">{t("required")}</span>}
              </button>
              <button type="button" disabled={i === 0} aria-label={t("Move {name} up", { name })} onClick={() => change(move(model, path, -1), [...base, i - 1])}>
                ↑
              </button>
              <button type="button" disabled={i === nodes.length - 1} aria-label={t("Move {name} down", { name })} onClick={() => change(move(model, path, 1), [...base, i + 1])}>
                ↓
              </button>
              <button type="button" disabled={!canIndent(nodes, i)} aria-label={t("Move {name} into the section above", { name })} onClick={() => moved(indent(model, path))}>
                →
              </button>
              <button type="button" disabled={!base.length || base[base.length - 1] === "c"} aria-label={t("Move {name} out of its section", { name })} onClick={() => moved(outdent(model, path))}>
                ←
              </button>
              <button type="button" class="danger" aria-label={t("Remove {name}", { name })} onClick={() => change(edit(model, path, () => null), null)}>
                ×
              </button>
            </div>
            {n.children && <Outline {...props} nodes={n.children} base={path} />}
            {n.template && <Outline {...props} nodes={n.template} base={[...path, "c"]} />}
            {n.tabs?.map((tab, k) => (
              <div key={k} class="fd-tab">
                <span class="muted">{String(tab.raw.label ?? t("Tab {n}", { n: k + 1 }))}</span>
                <Outline {...props} nodes={tab.children} base={[...path, `t${k}`]} />
              </div>
            ))}
          </li>
        );
      })}
    </ol>
  );
}

/** canIndent tells whether the node at i can move into the layout container just above it. */
const canIndent = (nodes: Node[], i: number) => i > 0 && isLayout(nodes[i - 1].raw) && !!(nodes[i - 1].children || nodes[i - 1].tabs?.length);

const num = (s: string): number | undefined => (s.trim() === "" || !isFinite(Number(s)) ? undefined : Number(s));
const str = (v: unknown) => (v == null ? "" : String(v));

/** Props edits one node's block: what its kind has, everything else untouched. */
function Props({ node, dupe, onChange }: { node: Node; dupe: boolean; onChange: (b: Block) => void }) {
  const b = node.raw;
  const kind = widgetKind(b.type);
  const set = (prop: string, v: unknown) => onChange(withProp(b, prop, v));
  const setRule = (r: Rule, v: unknown) => onChange(withRule(b, r, v));
  const text = (prop: string) => (e: Event) => set(prop, (e.currentTarget as HTMLInputElement).value);
  const numProp = (prop: string) => (e: Event) => set(prop, num((e.currentTarget as HTMLInputElement).value));
  const numRule = (r: Rule) => (e: Event) => setRule(r, num((e.currentTarget as HTMLInputElement).value));
  const key = str(b.key);
  const keyError = !key.trim() ? t("A field needs a key.") : dupe ? t("Another field has this key.") : null;

  if (!kind) {
    if (isLayout(b))
      return (
        <div class="fd-form">
          <p class="muted">{typeName(b.type)}</p>
          <Field label={t("Title")}>
            <input value={str(b.label)} onInput={text("label")} />
          </Field>
        </div>
      );
    return <p class="muted">{t("A {type} block: kept as the original designer wrote it.", { type: typeName(b.type) })}</p>;
  }
  const widgets = WIDGETS[kind] as readonly string[];
  return (
    <div class="fd-form">
      <Field label={t("Key")} hint={t("The name of the value in the form data.")}>
        <input value={key} required class="mono" onInput={text("key")} />
      </Field>
      {keyError && (
        <small class="error" role="alert">
          {keyError}
        </small>
      )}
      <Field label={t("Label")}>
        <input value={str(b.label)} onInput={text("label")} />
      </Field>
      {widgets.length > 1 && (
        <Field label={t("Shown as")}>
          <select value={String(b.type)} onChange={(e) => set("type", e.currentTarget.value)}>
            {widgets.map((w) => (
              <option key={w} value={w}>
                {typeName(w)}
              </option>
            ))}
          </select>
        </Field>
      )}
      {kind !== "table" && kind !== "upload" && kind !== "date" && (
        <Field label={t("Placeholder")}>
          <input value={str(b.placeholder)} onInput={text("placeholder")} />
        </Field>
      )}
      {kind !== "table" && (
        <label class="check">
          <input type="checkbox" checked={rule(b, "required") === true} onChange={(e) => setRule("required", e.currentTarget.checked ? true : undefined)} />
          {t("Required")}
        </label>
      )}
      {(kind === "input" || kind === "textarea") && (
        <>
          <div class="fd-pair">
            <Field label={t("Minimum length")}>
              <input type="number" min={0} value={str(rule(b, "minLength"))} onInput={numRule("minLength")} />
            </Field>
            <Field label={t("Maximum length")}>
              <input type="number" min={0} value={str(rule(b, "maxLength"))} onInput={numRule("maxLength")} />
            </Field>
          </div>
          <Field label={t("Pattern")} hint={t("A regular expression the whole value must match, e.g. ^[A-Z]{2}\\d+$")}>
            <input class="mono" value={str(rule(b, "pattern"))} onInput={(e) => setRule("pattern", e.currentTarget.value || undefined)} />
          </Field>
          <Field label={t("Message when the pattern does not match")}>
            <input value={str(rule(b, "message"))} onInput={(e) => setRule("message", e.currentTarget.value || undefined)} />
          </Field>
        </>
      )}
      {kind === "number" && (
        <>
          <Field label={t("Decimal places")}>
            <input type="number" min={0} max={10} value={str(b.precision)} onInput={numProp("precision")} />
          </Field>
          <div class="fd-pair">
            <Field label={t("Minimum")}>
              <input type="number" value={str(rule(b, "min"))} onInput={numRule("min")} />
            </Field>
            <Field label={t("Maximum")}>
              <input type="number" value={str(rule(b, "max"))} onInput={numRule("max")} />
            </Field>
          </div>
        </>
      )}
      {kind === "select" && <Options b={b} onChange={onChange} />}
      {kind === "upload" && (
        <Field label={t("Most files")}>
          <input type="number" min={1} value={str(b.maxCount)} onInput={numProp("maxCount")} />
        </Field>
      )}
      {kind === "table" && (
        <>
          <p class="muted">{t("Select the table, then add its columns from the list.")}</p>
          <div class="fd-pair">
            <Field label={t("Fewest rows")} hint={t("1 or more makes the table required.")}>
              <input type="number" min={0} value={str(b.minRows)} onInput={numProp("minRows")} />
            </Field>
            <Field label={t("Most rows")}>
              <input type="number" min={1} value={str(b.maxRows)} onInput={numProp("maxRows")} />
            </Field>
          </div>
        </>
      )}
    </div>
  );
}

/** duplicated tells whether the field at path shares its key with another field of its scope:
 * the form's own fields (through layouts, not into tables), or its table's columns. */
function duplicated(m: Model, path: Path): boolean {
  const key = nodeAt(m, path)?.raw.key;
  if (typeof key !== "string" || !key) return false;
  const c = path.lastIndexOf("c");
  const scope = c > 0 ? (nodeAt(m, path.slice(0, c))?.template ?? []) : m.nodes;
  let n = 0;
  const walk = (nodes: Node[]) =>
    nodes.forEach((x) => {
      if (x.raw.key === key) n++;
      if (x.children) walk(x.children);
      x.tabs?.forEach((tab) => walk(tab.children));
    });
  walk(scope);
  return n > 1;
}

function Options({ b, onChange }: { b: Block; onChange: (b: Block) => void }) {
  const options = staticOptions(b);
  if (options === null) return <p class="muted">{t("The options come from a data source of the document; they are kept as they are.")}</p>;
  const set = (i: number, o: Option) => onChange(withOptions(b, options.map((x, j) => (j === i ? o : x))));
  // A value typed keeps the type the option had: a number stays a number when it reads as one.
  const value = (old: unknown, s: string): unknown => (typeof old === "number" && s.trim() !== "" && isFinite(Number(s)) ? Number(s) : s);
  return (
    <fieldset class="fd-options">
      <legend>{t("Options")}</legend>
      {options.map((o, i) => (
        <div key={i} class="fd-option">
          <input aria-label={t("Option {n} label", { n: i + 1 })} value={o.label} onInput={(e) => set(i, { ...o, label: e.currentTarget.value })} />
          <input aria-label={t("Option {n} value", { n: i + 1 })} class="mono" value={str(o.value)} onInput={(e) => set(i, { ...o, value: value(o.value, e.currentTarget.value) })} />
          <button type="button" aria-label={t("Remove option {n}", { n: i + 1 })} onClick={() => onChange(withOptions(b, options.filter((_, j) => j !== i)))}>
            ×
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange(withOptions(b, [...options, { label: "", value: "" }]))}>
        {t("Add option")}
      </button>
    </fieldset>
  );
}

/** Preview renders doc with the Start page's renderer and checks it with its validation. */
function Preview({ doc }: { doc: Record<string, unknown> }) {
  const fields = useMemo(() => parseForm(doc), [doc]);
  const [data, setData] = useState<FormData>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [ok, setOk] = useState(false);
  return (
    <form
      class="fd-preview"
      onSubmit={(e) => {
        e.preventDefault();
        const found = validate(fields, data);
        setErrors(found);
        setOk(!Object.keys(found).length);
      }}
    >
      <p class="muted">{t("The form as the Start page shows it. Nothing is sent.")}</p>
      <Form fields={fields} data={data} onChange={(d) => (setData(d), setOk(false))} errors={errors} />
      <div class="actions">
        <button type="submit" class="primary">
          {t("Check the form")}
        </button>
      </div>
      <Notice text={ok ? t("The form is valid.") : null} />
      <details>
        <summary>{t("Document")}</summary>
        <pre class="fd-json">{JSON.stringify(doc, null, 2)}</pre>
      </details>
    </form>
  );
}

/**
 * FormDesignDialog designs the start form of flow: it opens the form of the flow's latest
 * version and deploys that version's definition with the designed form as a new draft version
 * (published from the flow's Versions).
 */
export function FormDesignDialog({ flow, onClose }: { flow: Flow; onClose: () => void }) {
  const base = useAsync(async () => {
    const versions = await call("approval/flow/find_versions", { flowId: flow.id });
    const last = versions.reduce<(typeof versions)[number] | null>((a, v) => (!a || v.version > a.version ? v : a), null);
    return last ? (await call("approval/flow/get_graph", { flowId: flow.id, versionId: last.id })).version : null;
  }, [flow.id]);
  const [doc, setDoc] = useState<Record<string, unknown> | null>(null);
  const act = useAction();
  const v = base.data;
  const deploy = () =>
    act.run(async () => {
      const made = await call("approval/flow/deploy", {
        flowId: flow.id,
        storageMode: v!.storageMode,
        description: t("Form designed in the console"),
        flowDefinition: v!.flowSchema,
        formSchema: doc ?? v!.formSchema ?? EMPTY_FORM,
      });
      return made;
    }, t("Deployed as a new draft version: publish it from the flow's versions."));
  return (
    <Dialog title={t("Start form of {name}", { name: flow.name })} onClose={onClose} wide>
      <ListStatus list={base} act={act} />
      {base.data === null && <p class="muted">{t("The flow has no version yet: deploy its definition first.")}</p>}
      {v && (
        <>
          <p class="muted">{t("Based on version {n}.", { n: v.version })}</p>
          <FormDesigner value={doc ?? v.formSchema ?? EMPTY_FORM} onChange={setDoc} />
          {can(P.approvalFlowDeploy) && (
            <div class="actions">
              <button type="button" class="primary" disabled={act.busy || !doc} onClick={() => void deploy()}>
                {t("Deploy as a new version")}
              </button>
            </div>
          )}
        </>
      )}
    </Dialog>
  );
}

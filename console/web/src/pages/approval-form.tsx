// The approval form: renders a flow's form-editor document (the formSchema deploy stored) as
// controls, with the designer's validation, and edits the form data the engine checks again.
// Layout containers (section, flex, grid, tabs) are flattened in document order, as the
// server's own projection does (approval/design.ParseFormSchema).
import { useEffect, useState } from "preact/hooks";
import { invoke } from "../api";
import { t } from "../i18n";

interface Rule {
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  min?: number;
  max?: number;
  pattern?: string;
  message?: string;
}
interface Option {
  label: string;
  value: unknown;
}
interface Source {
  kind?: string;
  dataSourceId?: string;
  options?: Option[];
  request?: { resource: string; action: string; version?: string; params?: Record<string, unknown> };
  mapping?: { labelKey?: string; valueKey?: string };
}
interface Block {
  type: string;
  key?: string;
  label?: string;
  placeholder?: string;
  precision?: number;
  validate?: Rule;
  dataSource?: Source;
  template?: Block[];
  minRows?: number;
  maxRows?: number;
  children?: Block[];
  tabs?: { children?: Block[] }[];
}
interface Doc {
  dataSources?: (Source & { id: string })[];
  presentations?: { pc?: { children?: Block[] }; mobile?: { children?: Block[] } };
}

/** FormField is one keyed control of the document, resolved for rendering. */
export interface FormField {
  key: string;
  type: string;
  label: string;
  placeholder: string;
  rule: Rule;
  precision?: number;
  source?: Source;
  columns?: FormField[];
  minRows?: number;
  maxRows?: number;
}

export type FormData = Record<string, unknown>;
/** Perms are a node's field permissions: visible, editable, hidden, required (absent: the default). */
export type Perms = Record<string, string>;

function keyed(blocks: Block[] | undefined, out: Block[]): Block[] {
  for (const b of blocks ?? []) {
    if (b.key) out.push(b);
    else {
      keyed(b.children, out);
      for (const tab of b.tabs ?? []) keyed(tab.children, out);
    }
  }
  return out;
}

function toField(b: Block, doc: Doc): FormField {
  let source = b.dataSource;
  if (source?.kind === "ref") source = doc.dataSources?.find((d) => d.id === source!.dataSourceId);
  return {
    key: b.key!,
    type: b.type,
    label: b.label ?? b.key!,
    placeholder: b.placeholder ?? "",
    rule: b.validate ?? {},
    precision: b.precision,
    source,
    columns: b.type === "subform" ? keyed(b.template, []).map((c) => toField(c, doc)) : undefined,
    minRows: b.minRows,
    maxRows: b.maxRows,
  };
}

/** parseForm lists the document's fields: pc first, then keys only the mobile layout has. */
export function parseForm(schema: unknown): FormField[] {
  const doc = (schema ?? {}) as Doc;
  const seen = new Set<string>();
  const out: FormField[] = [];
  for (const layer of [doc.presentations?.pc, doc.presentations?.mobile]) {
    for (const b of keyed(layer?.children, [])) {
      if (seen.has(b.key!)) continue;
      seen.add(b.key!);
      out.push(toField(b, doc));
    }
  }
  return out;
}

const empty = (v: unknown) => v === undefined || v === null || v === "" || (Array.isArray(v) && v.length === 0);

/** check answers the first problem of value under f's rule (required by rule or by permission). */
function check(f: FormField, value: unknown, required: boolean): string | null {
  const r = f.rule;
  if (empty(value)) return required || r.required ? t("{name} is required.", { name: f.label }) : null;
  const bad = (fallback: string) => r.message || fallback;
  if (typeof value === "string") {
    if (r.minLength != null && value.length < r.minLength) return bad(t("At least {n} characters.", { n: r.minLength }));
    if (r.maxLength != null && value.length > r.maxLength) return bad(t("At most {n} characters.", { n: r.maxLength }));
    if (r.pattern && !new RegExp(r.pattern).test(value)) return bad(t("{name} has the wrong form.", { name: f.label }));
  }
  if (typeof value === "number") {
    if (r.min != null && value < r.min) return bad(t("At least {n}.", { n: r.min }));
    if (r.max != null && value > r.max) return bad(t("At most {n}.", { n: r.max }));
  }
  if (f.columns && Array.isArray(value)) {
    if (f.minRows != null && value.length < f.minRows) return t("At least {n} rows.", { n: f.minRows });
    if (f.maxRows != null && value.length > f.maxRows) return t("At most {n} rows.", { n: f.maxRows });
    for (const row of value as FormData[]) {
      for (const c of f.columns) {
        const e = check(c, row[c.key], false);
        if (e) return `${f.label}: ${e}`;
      }
    }
  }
  return null;
}

/** validate answers the problems of data by field key; hidden and read-only fields are not checked. */
export function validate(fields: FormField[], data: FormData, perms?: Perms): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields) {
    const p = perms?.[f.key];
    if (perms && p !== "editable" && p !== "required") continue;
    const e = check(f, data[f.key], p === "required");
    if (e) out[f.key] = e;
  }
  return out;
}

function useOptions(source: Source | undefined): Option[] {
  const [remote, setRemote] = useState<Option[]>([]);
  const req = source?.kind === "remote" ? source.request : undefined;
  useEffect(() => {
    if (!req) return;
    const m = source?.mapping ?? {};
    invoke(req.resource, req.action, req.params ?? {})
      .then((d) => {
        const rows = (Array.isArray(d) ? d : ((d as { items?: unknown[] })?.items ?? [])) as Record<string, unknown>[];
        setRemote(rows.map((r) => ({ label: String(r[m.labelKey ?? "label"] ?? ""), value: r[m.valueKey ?? "value"] })));
      })
      .catch(() => setRemote([]));
  }, [req?.resource, req?.action]);
  return req ? remote : (source?.options ?? []);
}

interface ControlProps {
  f: FormField;
  id: string;
  value: unknown;
  readOnly: boolean;
  onChange: (v: unknown) => void;
}

function Control({ f, id, value, readOnly, onChange }: ControlProps) {
  const options = useOptions(f.source);
  const str = value == null ? "" : String(value);
  const text = (e: Event) => onChange((e.currentTarget as HTMLInputElement).value);
  switch (f.type) {
    case "textarea":
    case "code-editor":
      return <textarea id={id} rows={3} value={str} placeholder={f.placeholder} readOnly={readOnly} onInput={text} />;
    case "number":
      return (
        <input
          id={id}
          type="number"
          step={f.precision ? 10 ** -f.precision : 1}
          value={str}
          readOnly={readOnly}
          onInput={(e) => {
            const v = e.currentTarget.value;
            onChange(v === "" ? null : Number(v));
          }}
        />
      );
    case "date":
      return <input id={id} type="date" value={str} readOnly={readOnly} onInput={text} />;
    case "datetime":
      return <input id={id} type="datetime-local" value={str} readOnly={readOnly} onInput={text} />;
    case "select":
    case "radio": {
      const i = options.findIndex((o) => o.value === value);
      return (
        <select id={id} disabled={readOnly} value={i < 0 ? "" : String(i)} onChange={(e) => onChange(e.currentTarget.value === "" ? null : options[Number(e.currentTarget.value)]?.value)}>
          <option value="">{t("Choose…")}</option>
          {options.map((o, k) => (
            <option key={k} value={String(k)}>
              {o.label}
            </option>
          ))}
        </select>
      );
    }
    case "checkbox-group": {
      const picked = Array.isArray(value) ? (value as unknown[]) : [];
      return (
        <fieldset id={id} class="checks">
          {options.map((o, k) => (
            <label key={k}>
              <input
                type="checkbox"
                disabled={readOnly}
                checked={picked.includes(o.value)}
                onChange={(e) => onChange(e.currentTarget.checked ? [...picked, o.value] : picked.filter((v) => v !== o.value))}
              />
              {o.label}
            </label>
          ))}
        </fieldset>
      );
    }
    case "upload":
      // The value is a list of storage keys; the console lists them, uploads go through Files.
      return <input id={id} type="text" readOnly value={Array.isArray(value) ? value.join(", ") : str} placeholder={t("File keys (upload on the Files page)")} />;
    case "subform":
      return <Rows f={f} id={id} value={value} readOnly={readOnly} onChange={onChange} />;
    default:
      return <input id={id} type="text" value={str} placeholder={f.placeholder} readOnly={readOnly} onInput={text} />;
  }
}

function Rows({ f, id, value, readOnly, onChange }: ControlProps) {
  const rows = Array.isArray(value) ? (value as FormData[]) : [];
  const set = (i: number, k: string, v: unknown) => onChange(rows.map((r, j) => (j === i ? { ...r, [k]: v } : r)));
  return (
    <div id={id} class="subform">
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              {f.columns!.map((c) => (
                <th key={c.key}>{c.label}</th>
              ))}
              <th>
                <span class="sr-only">{t("Actions")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={i}>
                {f.columns!.map((c) => (
                  <td key={c.key}>
                    <Control f={c} id={`${id}-${i}-${c.key}`} value={r[c.key]} readOnly={readOnly} onChange={(v) => set(i, c.key, v)} />
                  </td>
                ))}
                <td>
                  {!readOnly && (
                    <button type="button" aria-label={t("Remove row {n}", { n: i + 1 })} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
                      ×
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!readOnly && (f.maxRows == null || rows.length < f.maxRows) && (
        <button type="button" onClick={() => onChange([...rows, {}])}>
          {t("Add row")}
        </button>
      )}
    </div>
  );
}

/**
 * Form renders fields over data. Without perms every field is editable (the start form); with
 * them (a task's node) hidden fields are left out and only editable or required ones take input.
 */
export function Form(props: { fields: FormField[]; data: FormData; onChange?: (d: FormData) => void; perms?: Perms; errors?: Record<string, string> }) {
  const { fields, data, perms, errors } = props;
  if (!fields.length) return <p class="muted">{t("This flow has no form fields.")}</p>;
  return (
    <div class="form-grid">
      {fields.map((f) => {
        const p = perms?.[f.key];
        if (p === "hidden" || (perms && !(f.key in data) && p !== "editable" && p !== "required")) return null;
        const readOnly = !props.onChange || (!!perms && p !== "editable" && p !== "required");
        const id = `fld-${f.key}`;
        const required = !readOnly && (f.rule.required || p === "required");
        return (
          <div class="field" key={f.key} data-field={f.key}>
            <label for={id}>
              {f.label}
              {required && <span aria-hidden="true"> *</span>}
            </label>
            <Control f={f} id={id} value={data[f.key]} readOnly={readOnly} onChange={(v) => props.onChange?.({ ...data, [f.key]: v })} />
            {errors?.[f.key] && (
              <small class="error" role="alert">
                {errors[f.key]}
              </small>
            )}
          </div>
        );
      })}
    </div>
  );
}

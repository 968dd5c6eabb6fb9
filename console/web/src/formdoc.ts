// The form designer's model of a form-editor document (the start form's formSchema, the shape
// approval/design.ParseFormSchema reads): the pc presentation's blocks as a tree of nodes, each
// holding its block verbatim (raw) and, for containers, its children as nodes. Edits replace a
// node's raw with a changed copy; toDoc puts the blocks back together, so whatever the designer
// does not edit — ids, styling, props, linkage, data sources, members of the document this model
// does not know — comes back exactly as it was. The mobile presentation is not shown; it follows
// the changes made to the pc fields (toDoc).

/** Block is one node of the document as JSON: type, key, label, validate, … and anything else. */
export type Block = Record<string, unknown> & { type?: string };

/** Node is a block in the designer: leaves are fields or presentation nodes (no key). */
export interface Node {
  uid: string;
  raw: Block;
  /** children of a section, flex or grid container. */
  children?: Node[];
  /** tabs of a tabs container: each tab's raw (without children) and its children. */
  tabs?: { raw: Block; children: Node[] }[];
  /** template of a subform (a table's columns). */
  template?: Node[];
}

/** Model is a document in the designer: its top-level blocks (pc) and the document itself. */
export interface Model {
  doc: Record<string, unknown>;
  nodes: Node[];
}

/** The widget types a field can have (approval/design's kindByWidget), grouped by the kind the
 * engine derives; subform is the table. */
export const WIDGETS = {
  input: ["textfield"],
  textarea: ["textarea", "code-editor"],
  number: ["number"],
  select: ["select", "radio", "checkbox-group"],
  date: ["date", "datetime"],
  upload: ["upload"],
  table: ["subform"],
} as const;

export const LAYOUTS = ["section", "flex", "grid", "tabs"] as const;

let seq = 0;
const uid = () => `n${++seq}`;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const blocks = (v: unknown): Block[] => (Array.isArray(v) ? (v.filter(isObj) as Block[]) : []);

/** isLayout tells a layout container (its children are fields of the same form). */
export const isLayout = (b: Block): boolean => (LAYOUTS as readonly string[]).includes(String(b.type));

function toNode(b: Block): Node {
  const n: Node = { uid: uid(), raw: b };
  if (b.type === "tabs" && Array.isArray(b.tabs)) n.tabs = blocks(b.tabs).map((tab) => ({ raw: tab, children: blocks(tab.children).map(toNode) }));
  else if (isLayout(b) && Array.isArray(b.children)) n.children = blocks(b.children).map(toNode);
  if (b.type === "subform" && Array.isArray(b.template)) n.template = blocks(b.template).map(toNode);
  return n;
}

function toBlock(n: Node): Block {
  const b: Block = { ...n.raw };
  if (n.children) b.children = n.children.map(toBlock);
  if (n.tabs) b.tabs = n.tabs.map((tab) => ({ ...tab.raw, children: tab.children.map(toBlock) }));
  if (n.template) b.template = n.template.map(toBlock);
  return b;
}

/** toModel reads a document (anything: a missing or broken one is an empty form). */
export function toModel(schema: unknown): Model {
  const doc = isObj(schema) ? schema : {};
  const pres = isObj(doc.presentations) ? doc.presentations : {};
  const pc = isObj(pres.pc) ? pres.pc : {};
  return { doc, nodes: blocks(pc.children).map(toNode) };
}

/** toDoc writes the model back: the document it came from with the pc presentation's blocks
 * replaced by the model's. A mobile presentation, which the designer does not show, follows the
 * fields' changes (mirrorMobile), so a phone never lacks a field the pc form gained. */
export function toDoc(m: Model): Record<string, unknown> {
  const pres = isObj(m.doc.presentations) ? m.doc.presentations : {};
  const pc = isObj(pres.pc) ? pres.pc : {};
  if (!m.nodes.length && !Array.isArray(pc.children)) return m.doc; // nothing added to a document without a pc form
  const children = m.nodes.map(toBlock);
  const out: Record<string, unknown> = { ...pres, pc: { ...pc, children } };
  if (isObj(pres.mobile) && Array.isArray(pres.mobile.children)) {
    out.mobile = { ...pres.mobile, children: mirrorMobile(blocks(pres.mobile.children), byKey(blocks(pc.children)), byKey(children)) };
  }
  return { ...m.doc, presentations: out };
}

/** byKey maps each keyed block of a block tree (containers, tabs; a table whole) to its block. */
function byKey(bs: Block[], out = new Map<string, Block>()): Map<string, Block> {
  for (const b of bs) {
    if (typeof b.key === "string" && b.key) out.set(b.key, b);
    else {
      byKey(blocks(b.children), out);
      for (const tab of blocks(b.tabs)) byKey(blocks(tab.children), out);
    }
  }
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** patch answers t with the members that differ between was and now changed the same way,
 * object members (validate, props) member by member; an object the patch empties is left out, as
 * withRule leaves out an emptied validate. A block's id is its own and never patched. */
function patch(t: Record<string, unknown>, was: Record<string, unknown>, now: Record<string, unknown>): Record<string, unknown> {
  const c = { ...t };
  for (const m of new Set([...Object.keys(was), ...Object.keys(now)])) {
    if (m === "id" || same(was[m], now[m])) continue;
    const w = was[m];
    const n = now[m];
    if (isObj(w) && isObj(n)) {
      const p = patch(isObj(t[m]) ? t[m] : {}, w, n);
      if (Object.keys(p).length) c[m] = p;
      else delete c[m];
    } else if (m in now) c[m] = n;
    else delete c[m];
  }
  return c;
}

/** mirrorMobile applies to the mobile blocks what the designer changed between the pc fields
 * before and after: a field removed from pc is removed, a changed field gets the same members
 * changed (patch: its mobile-only members, such as its id and styling, stay), and a field added to pc is
 * appended at the end. Fields the designer did not touch stay exactly as written, so an unedited
 * document round-trips unchanged. */
function mirrorMobile(mobile: Block[], before: Map<string, Block>, after: Map<string, Block>): Block[] {
  const seen = new Set<string>();
  const walk = (bs: Block[]): Block[] =>
    bs.flatMap((b): Block[] => {
      const k = typeof b.key === "string" && b.key ? b.key : "";
      if (!k) {
        const c: Block = { ...b };
        if (Array.isArray(b.children)) c.children = walk(blocks(b.children));
        if (Array.isArray(b.tabs)) c.tabs = blocks(b.tabs).map((tab) => ({ ...tab, children: walk(blocks(tab.children)) }));
        return [c];
      }
      seen.add(k);
      const was = before.get(k);
      const now = after.get(k);
      if (was && !now) return [];
      if (!was || !now || same(was, now)) return [b];
      return [patch(b, was, now)];
    });
  const out = walk(mobile);
  for (const [k, b] of after) if (!before.has(k) && !seen.has(k)) out.push(b);
  return out;
}

/** withProp answers a copy of b with prop set to v (left out when v is undefined). */
export function withProp(b: Block, prop: string, v: unknown): Block {
  const out = { ...b };
  if (v === undefined) delete out[prop];
  else out[prop] = v;
  return out;
}

/** Rule names a validate member the designer edits. */
export type Rule = "required" | "minLength" | "maxLength" | "min" | "max" | "pattern" | "message";

/** withRule answers a copy of b with validate[rule] set to v (left out when v is undefined; an
 * emptied validate is left out). */
export function withRule(b: Block, rule: Rule, v: unknown): Block {
  const validate = withProp(isObj(b.validate) ? b.validate : {}, rule, v);
  return withProp(b, "validate", Object.keys(validate).length ? validate : undefined);
}

/** rule reads validate[rule]. */
export function rule<T>(b: Block, r: Rule): T | undefined {
  return isObj(b.validate) ? (b.validate[r] as T | undefined) : undefined;
}

/** Option is a static option of a select. */
export interface Option {
  label: string;
  value: unknown;
}

/** staticOptions answers a field's inline static options, or null when its options come from
 * elsewhere (a shared data source, a remote request) and the designer keeps them as they are. */
export function staticOptions(b: Block): Option[] | null {
  const ds = b.dataSource;
  if (ds === undefined) return [];
  if (!isObj(ds) || ds.kind !== "static") return null;
  return Array.isArray(ds.options) ? (ds.options as Option[]) : [];
}

/** withOptions answers a copy of b with these inline static options. */
export function withOptions(b: Block, options: Option[]): Block {
  const ds = isObj(b.dataSource) ? b.dataSource : {};
  return withProp(b, "dataSource", { ...ds, kind: "static", options });
}

/** Path locates a node: indexes from the top, through children, a tab ("t" + tab index, then an
 * index) or a template ("c", then an index). */
export type Path = (number | string)[];

function listAt(nodes: Node[], path: Path): { list: Node[]; i: number } | null {
  let list = nodes;
  for (let p = 0; p < path.length - 1; ) {
    const n = list[path[p] as number];
    if (!n) return null;
    const step = path[p + 1];
    if (step === "c" && n.template) {
      list = n.template;
      p += 2;
    } else if (typeof step === "string" && step.startsWith("t") && n.tabs) {
      const tab = n.tabs[Number(step.slice(1))];
      if (!tab) return null;
      list = tab.children;
      p += 2;
    } else if (n.children) {
      list = n.children;
      p += 1;
    } else return null;
  }
  return { list, i: path[path.length - 1] as number };
}

/** nodeAt answers the node at path, if any. */
export function nodeAt(m: Model, path: Path): Node | undefined {
  const at = listAt(m.nodes, path);
  return at?.list[at.i];
}

function clone(nodes: Node[]): Node[] {
  return nodes.map((n) => ({
    ...n,
    children: n.children && clone(n.children),
    tabs: n.tabs?.map((tab) => ({ ...tab, children: clone(tab.children) })),
    template: n.template && clone(n.template),
  }));
}

/** edit answers a model whose node at path is fn's answer (null: the node is removed). */
export function edit(m: Model, path: Path, fn: (n: Node) => Node | null): Model {
  const nodes = clone(m.nodes);
  const at = listAt(nodes, path);
  if (!at || !at.list[at.i]) return m;
  const next = fn(at.list[at.i]);
  if (next) at.list[at.i] = next;
  else at.list.splice(at.i, 1);
  return { ...m, nodes };
}

/** move answers a model with the node at path moved by delta places among its siblings. */
export function move(m: Model, path: Path, delta: number): Model {
  const nodes = clone(m.nodes);
  const at = listAt(nodes, path);
  const j = at ? at.i + delta : -1;
  if (!at || j < 0 || j >= at.list.length) return m;
  const [n] = at.list.splice(at.i, 1);
  at.list.splice(j, 0, n);
  return { ...m, nodes };
}

/** insert answers a model with b added at the end of the list inside the container at path
 * (a layout's children, a subform's template; [] = the top level). */
export function insert(m: Model, path: Path, b: Block): Model {
  const nodes = clone(m.nodes);
  const n = toNode(b);
  if (!path.length) nodes.push(n);
  else {
    const at = listAt(nodes, path);
    const c = at?.list[at.i];
    if (!c) return m;
    if (c.template) c.template.push(n);
    else if (c.tabs?.length) c.tabs[c.tabs.length - 1].children.push(n);
    else (c.children ??= []).push(n);
  }
  return { ...m, nodes };
}

/** keys answers every field key the model uses (top level, containers, templates). */
export function keys(nodes: Node[], out = new Set<string>()): Set<string> {
  for (const n of nodes) {
    if (typeof n.raw.key === "string" && n.raw.key) out.add(n.raw.key);
    keys(n.children ?? [], out);
    n.tabs?.forEach((tab) => keys(tab.children, out));
    keys(n.template ?? [], out);
  }
  return out;
}

/** newBlock answers a new block of a widget type with a key no other field of taken uses. */
export function newBlock(type: string, taken: Set<string>): Block {
  const id = `${type.replace(/[^a-z]/g, "")}_${Math.random().toString(36).slice(2, 8)}`;
  if (isLayout({ type })) return type === "tabs" ? { id, type, tabs: [{ id: `${id}_1`, label: "Tab 1", children: [] }] } : { id, type, label: "", children: [] };
  let n = 1;
  const base = type === "subform" ? "table" : type.replace(/[^a-z]/g, "");
  while (taken.has(`${base}${n}`)) n++;
  const b: Block = { id, type, key: `${base}${n}`, label: `${base}${n}` };
  if (type === "select" || type === "radio" || type === "checkbox-group") b.dataSource = { kind: "static", options: [] };
  if (type === "subform") b.template = [{ id: `${id}_c1`, type: "textfield", key: "column1", label: "column1" }];
  return b;
}

/** widgetKind answers the engine's field kind of a widget type (undefined: no field). */
export function widgetKind(type: string | undefined): keyof typeof WIDGETS | undefined {
  for (const [k, ws] of Object.entries(WIDGETS)) if ((ws as readonly string[]).includes(String(type))) return k as keyof typeof WIDGETS;
  return undefined;
}

/** indent answers a model with the node at path moved to the end of the layout container just
 * above it (a section, row, grid, or a tabs' last tab), and the node's new path; null when the
 * node above is no layout container (a table's columns are added to it, not moved in). */
export function indent(m: Model, path: Path): { model: Model; path: Path } | null {
  const i = path[path.length - 1] as number;
  if (i < 1) return null;
  const nodes = clone(m.nodes);
  const at = listAt(nodes, path);
  const above = at?.list[i - 1];
  if (!at || !above || !isLayout(above.raw) || !(above.children || above.tabs?.length)) return null;
  const [n] = at.list.splice(i, 1);
  const base = [...path.slice(0, -1), i - 1];
  if (above.tabs?.length) {
    const k = above.tabs.length - 1;
    above.tabs[k].children.push(n);
    return { model: { ...m, nodes }, path: [...base, `t${k}`, above.tabs[k].children.length - 1] };
  }
  above.children!.push(n);
  return { model: { ...m, nodes }, path: [...base, above.children!.length - 1] };
}

/** outdent answers a model with the node at path moved out of its layout container, just after
 * it, and the node's new path; null at the top level and for a table's columns. */
export function outdent(m: Model, path: Path): { model: Model; path: Path } | null {
  if (path.length < 2 || path[path.length - 2] === "c") return null;
  const tab = typeof path[path.length - 2] === "string";
  const container = path.slice(0, tab ? -2 : -1);
  const nodes = clone(m.nodes);
  const from = listAt(nodes, path);
  const to = listAt(nodes, container);
  if (!from || !to || !from.list[from.i]) return null;
  const [n] = from.list.splice(from.i, 1);
  to.list.splice(to.i + 1, 0, n);
  return { model: { ...m, nodes }, path: [...container.slice(0, -1), to.i + 1] };
}

// The flow designer's editor model and the document it reads and writes. The document is the
// original designer's flow definition (wire-approval §5: {nodes, edges}, React-Flow shape), which
// deploy takes as flowDefinition and stores as sent. The model keeps every member of the
// document it does not edit (unknown node, edge and top-level keys, a node's whole data object),
// so a flow from the original's designer is saved back with nothing lost: toDoc(fromDoc(d))
// deep-equals d. Every edit is a pure function returning a new model; History keeps undo/redo.

/** Kinds of nodes the engine knows (package approval/design NodeKind). */
export const NODE_KINDS = ["start", "approval", "handle", "condition", "cc", "end"] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

/** Json is any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

/** FlowDoc is the flow definition document as the original's designer writes it. */
export interface FlowDoc {
  nodes: DocNode[];
  edges: DocEdge[];
  [k: string]: Json | DocNode[] | DocEdge[];
}
export interface DocNode {
  id: string;
  kind: string;
  position: { x: number; y: number };
  data?: JsonObject;
  [k: string]: Json | undefined;
}
export interface DocEdge {
  id: string;
  source: string;
  target: string;
  sourceHandle?: string;
  data?: JsonObject;
  [k: string]: Json | undefined;
}

/** MNode is a node of the model: what the canvas draws plus the document node it came from. */
export interface MNode {
  id: string;
  kind: string;
  x: number;
  y: number;
  /** data is the node's data object (settings by kind); absent when the document had none. */
  data?: JsonObject;
  /** rest holds the node's other members (position's other keys under "position"). */
  rest: JsonObject;
}
export interface MEdge {
  id: string;
  source: string;
  target: string;
  /** handle is the condition branch id the edge leaves by (sourceHandle). */
  handle?: string;
  data?: JsonObject;
  rest: JsonObject;
}
export interface Model {
  nodes: MNode[];
  edges: MEdge[];
  rest: JsonObject;
}

/** Branch is one way out of a condition node (data.branches[]). */
export interface Branch {
  id: string;
  label: string;
  priority: number;
  isDefault?: boolean;
  conditionGroups?: { conditions: JsonObject[] }[];
  [k: string]: Json | undefined;
}

const clone = <T,>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

function omit(o: Record<string, unknown>, keys: string[]): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k)) out[k] = v as Json;
  return out;
}

/** fromDoc reads a flow document into the model (a deep copy: the document is not kept). */
export function fromDoc(doc: FlowDoc): Model {
  const d = clone(doc);
  return {
    nodes: (d.nodes ?? []).map((n) => ({
      id: n.id,
      kind: n.kind,
      x: n.position?.x ?? 0,
      y: n.position?.y ?? 0,
      data: n.data,
      rest: { ...omit(n, ["id", "kind", "position", "data"]), ...(n.position ? { position: omit(n.position, ["x", "y"]) } : {}) },
    })),
    edges: (d.edges ?? []).map((e) => ({
      id: e.id,
      source: e.source,
      target: e.target,
      ...("sourceHandle" in e ? { handle: e.sourceHandle } : {}),
      data: e.data,
      rest: omit(e, ["id", "source", "target", "sourceHandle", "data"]),
    })),
    rest: omit(d, ["nodes", "edges"]),
  };
}

/** toDoc writes the model as the flow document (members in the original's order: id, kind,
 * position, data; id, source, target, sourceHandle, data). */
export function toDoc(m: Model): FlowDoc {
  return clone({
    nodes: m.nodes.map((n) => {
      const { position: pos, ...rest } = n.rest as { position?: JsonObject };
      const out: DocNode = { id: n.id, kind: n.kind, position: { x: n.x, y: n.y, ...(pos ?? {}) } };
      if (n.data !== undefined) out.data = n.data;
      return Object.assign(out, rest);
    }),
    edges: m.edges.map((e) => {
      const out: DocEdge = { id: e.id, source: e.source, target: e.target };
      if (e.handle !== undefined) out.sourceHandle = e.handle;
      if (e.data !== undefined) out.data = e.data;
      return Object.assign(out, e.rest);
    }),
    ...m.rest,
  });
}

/** newId returns an id of the form prefix + n unused by taken. */
export function newId(prefix: string, taken: Iterable<string>): string {
  const used = new Set(taken);
  for (let i = 1; ; i++) if (!used.has(`${prefix}${i}`)) return `${prefix}${i}`;
}

/** defaultData is a new node's data: a name, and for a condition node a branch and the default
 * branch (the engine needs at least two, exactly one default). */
export function defaultData(kind: string, name: string, branchIds: [string, string]): JsonObject {
  switch (kind) {
    case "approval":
    case "handle":
      return { name, assignees: [], ccs: [], fieldPermissions: {} };
    case "cc":
      return { name, ccs: [], fieldPermissions: {} };
    case "condition":
      return {
        name,
        branches: [
          { id: branchIds[0], label: "", priority: 1, conditionGroups: [{ conditions: [{ kind: "field", subject: "", operator: "eq", value: "" }] }] },
          { id: branchIds[1], label: "", priority: 2, isDefault: true },
        ],
      };
  }
  return { name };
}

/** branchesOf returns a condition node's branches (an empty list for any other node). */
export function branchesOf(n: MNode | undefined): Branch[] {
  const b = n?.data?.branches;
  return Array.isArray(b) ? (b as unknown as Branch[]) : [];
}

/** addNode adds a node of kind at (x, y) and returns the model and the new node's id. */
export function addNode(m: Model, kind: string, x: number, y: number, name: string): [Model, string] {
  const id = newId(kind === "approval" ? "approve" : kind, m.nodes.map((n) => n.id));
  const branchIds = [newId(`${id}_b`, []), `${id}_default`] as [string, string];
  const node: MNode = { id, kind, x: Math.round(x), y: Math.round(y), data: defaultData(kind, name, branchIds), rest: {} };
  return [{ ...m, nodes: [...m.nodes, node] }, id];
}

/** moveNode places node id at (x, y). */
export function moveNode(m: Model, id: string, x: number, y: number): Model {
  return { ...m, nodes: m.nodes.map((n) => (n.id === id ? { ...n, x: Math.round(x), y: Math.round(y) } : n)) };
}

/** setData replaces node id's data object. */
export function setData(m: Model, id: string, data: JsonObject): Model {
  return { ...m, nodes: m.nodes.map((n) => (n.id === id ? { ...n, data } : n)) };
}

/** removeNode deletes a node and every edge touching it; rollback targets naming it are kept
 * (the server's validation then names the node that still points at it). */
export function removeNode(m: Model, id: string): Model {
  return { ...m, nodes: m.nodes.filter((n) => n.id !== id), edges: m.edges.filter((e) => e.source !== id && e.target !== id) };
}

/** removeEdge deletes edge id. */
export function removeEdge(m: Model, id: string): Model {
  return { ...m, edges: m.edges.filter((e) => e.id !== id) };
}

/** connect makes source lead to target. A non-condition node has one way out, so its previous
 * edge is replaced; a condition node's edge leaves by a branch (handle), one edge per branch.
 * An empty target removes the way out. The edge keeps its id (and data) when it is re-aimed. */
export function connect(m: Model, source: string, target: string, handle?: string): Model {
  if (source === target) return m;
  const same = (e: MEdge) => e.source === source && (handle === undefined || e.handle === handle);
  const old = m.edges.find(same);
  const edges = m.edges.filter((e) => e !== old);
  if (!target) return { ...m, edges };
  const edge: MEdge = old
    ? { ...old, target }
    : { id: newId("e", m.edges.map((e) => e.id)), source, target, ...(handle !== undefined ? { handle } : {}), rest: {} };
  const at = old ? m.edges.indexOf(old) : edges.length;
  edges.splice(at, 0, edge);
  return { ...m, edges };
}

/** setBranches replaces a condition node's branches; edges of branches that are gone are
 * removed. */
export function setBranches(m: Model, id: string, branches: Branch[]): Model {
  const n = m.nodes.find((x) => x.id === id);
  if (!n) return m;
  const ids = new Set(branches.map((b) => b.id));
  const next = setData(m, id, { ...(n.data ?? {}), branches: branches as unknown as Json });
  return { ...next, edges: next.edges.filter((e) => e.source !== id || e.handle === undefined || ids.has(e.handle)) };
}

/** reorderBranch moves a non-default branch up (-1) or down (+1) and renumbers the non-default
 * branches' priorities 1, 2, … in their new order (the order the engine tries them). */
export function reorderBranch(branches: Branch[], index: number, by: -1 | 1): Branch[] {
  const out = branches.slice();
  const j = index + by;
  if (j < 0 || j >= out.length || out[index]?.isDefault || out[j]?.isDefault) return out;
  [out[index], out[j]] = [out[j]!, out[index]!];
  let p = 1;
  return out.map((b) => (b.isDefault ? b : { ...b, priority: p++ }));
}

/** emptyFlow is a new flow: start → approval → end. */
export function emptyFlow(names: { start: string; approval: string; end: string }): FlowDoc {
  return {
    nodes: [
      { id: "start", kind: "start", position: { x: 0, y: 0 }, data: { name: names.start } },
      { id: "approve1", kind: "approval", position: { x: 0, y: 120 }, data: { name: names.approval, assignees: [{ kind: "self", sortOrder: 0 }] } },
      { id: "end", kind: "end", position: { x: 0, y: 240 }, data: { name: names.end } },
    ],
    edges: [
      { id: "e1", source: "start", target: "approve1" },
      { id: "e2", source: "approve1", target: "end" },
    ],
  };
}

/** History is the undo/redo stack of models. */
export interface History {
  past: Model[];
  present: Model;
  future: Model[];
}
const LIMIT = 200;

export const historyOf = (m: Model): History => ({ past: [], present: m, future: [] });

/** push records next as the present (dropping the redo branch); equal models are not recorded. */
export function push(h: History, next: Model): History {
  if (next === h.present) return h;
  return { past: [...h.past, h.present].slice(-LIMIT), present: next, future: [] };
}
export function undo(h: History): History {
  const prev = h.past[h.past.length - 1];
  return prev ? { past: h.past.slice(0, -1), present: prev, future: [h.present, ...h.future] } : h;
}
export function redo(h: History): History {
  const next = h.future[0];
  return next ? { past: [...h.past, h.present], present: next, future: h.future.slice(1) } : h;
}

/** Change is one difference between two documents: a node or edge added, removed or changed
 * (with the data settings and placement members that differ). */
export interface Change {
  what: "node" | "edge";
  id: string;
  how: "added" | "removed" | "changed";
  keys: string[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(canon(a)) === JSON.stringify(canon(b));
function canon(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canon);
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon((v as Record<string, unknown>)[k])]));
  return v;
}

function diffKeys(a: Record<string, unknown>, b: Record<string, unknown>, prefix = ""): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.flatMap((k) => {
    if (same(a[k], b[k])) return [];
    if (k === "data" && a[k] && b[k] && typeof a[k] === "object" && typeof b[k] === "object") {
      return diffKeys(a[k] as Record<string, unknown>, b[k] as Record<string, unknown>, "");
    }
    return [prefix + k];
  });
}

/** diff lists what changed from document a (the published version) to b (the edited one). */
export function diff(a: FlowDoc, b: FlowDoc): Change[] {
  const out: Change[] = [];
  const side = <T extends { id: string }>(what: "node" | "edge", xs: T[], ys: T[]) => {
    const left = new Map(xs.map((x) => [x.id, x]));
    const right = new Map(ys.map((y) => [y.id, y]));
    for (const [id, x] of left) {
      const y = right.get(id);
      if (!y) out.push({ what, id, how: "removed", keys: [] });
      else if (!same(x, y)) out.push({ what, id, how: "changed", keys: diffKeys(x as Record<string, unknown>, y as Record<string, unknown>) });
    }
    for (const id of right.keys()) if (!left.has(id)) out.push({ what, id, how: "added", keys: [] });
  };
  side("node", a.nodes ?? [], b.nodes ?? []);
  side("edge", a.edges ?? [], b.edges ?? []);
  return out;
}

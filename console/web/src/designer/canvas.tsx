// The designer's canvas: the flow as SVG, nodes placed at their positions. Drag a node to move
// it, drag from a node's port (the dot under it; one per branch on a condition node) onto
// another node to connect them, drag the background to pan, the wheel or +/− to zoom. Every
// node is a focusable button-like element: Tab reaches it, arrows move it (Shift: farther),
// Delete removes it. A drag is drawn from a local position and recorded once when it ends.
import { memo } from "preact/compat";
import { useRef, useState } from "preact/hooks";
import { t } from "../i18n";
import { branchesOf, type MEdge, type MNode, type Model } from "./model";

export const NODE_W = 160;
export const NODE_H = 52;
/** DETAIL_K is the zoom below which nodes are drawn without their text (under 5 px tall, not
 * legible; a large flow fitted to the canvas opens and drags faster). The name stays each
 * node's accessible name. */
export const DETAIL_K = 0.4;

export interface View {
  x: number;
  y: number;
  k: number;
}

export interface CanvasProps {
  model: Model;
  view: View;
  selected: string;
  invalid: Set<string>;
  changed: Set<string>;
  onView: (v: View) => void;
  onSelect: (id: string) => void;
  onMove: (id: string, x: number, y: number) => void;
  onConnect: (source: string, target: string, handle?: string) => void;
  onDelete: (id: string) => void;
  onKey: (e: KeyboardEvent) => void;
}

/** ports are where a node's ways out start: one per branch of a condition node, else one. */
function ports(n: MNode): { handle?: string; label: string; dx: number }[] {
  if (n.kind === "end") return [];
  if (n.kind !== "condition") return [{ label: "", dx: NODE_W / 2 }];
  const bs = branchesOf(n);
  return bs.map((b, i) => ({ handle: b.id, label: b.label || b.id, dx: ((i + 1) * NODE_W) / (bs.length + 1) }));
}

function edgePath(a: MNode, b: MNode, dx: number): string {
  const x1 = a.x + dx;
  const y1 = a.y + NODE_H;
  const x2 = b.x + NODE_W / 2;
  const y2 = b.y;
  const c = Math.max(40, Math.abs(y2 - y1) / 2);
  return `M ${x1} ${y1} C ${x1} ${y1 + c}, ${x2} ${y2 - c}, ${x2} ${y2}`;
}

const NodeShape = memo(function NodeShape(props: { n: MNode; x: number; y: number; detail: boolean; selected: boolean; invalid: boolean; changed: boolean; onDown: (e: PointerEvent, n: MNode) => void; onPortDown: (e: PointerEvent, n: MNode, handle?: string) => void; onFocus: (id: string) => void }) {
  const { n } = props;
  const name = String(n.data?.name ?? "") || n.id;
  const cls = `dnode ${n.kind}${props.selected ? " selected" : ""}${props.invalid ? " invalid" : ""}${props.changed ? " changed" : ""}`;
  return (
    <g
      class={cls}
      data-node={n.id}
      transform={`translate(${props.x} ${props.y})`}
      tabindex={0}
      role="button"
      aria-pressed={props.selected}
      aria-label={`${name} — ${t(n.kind)}${props.invalid ? ` — ${t("has problems")}` : ""}`}
      onPointerDown={(e) => props.onDown(e, n)}
      onFocus={() => props.onFocus(n.id)}
    >
      <rect width={NODE_W} height={NODE_H} rx={n.kind === "start" || n.kind === "end" ? NODE_H / 2 : n.kind === "condition" ? 14 : 6} />
      {props.detail && (
        <text x={NODE_W / 2} y={21} text-anchor="middle" class="name">
          {name.length > 20 ? `${name.slice(0, 19)}…` : name}
        </text>
      )}
      {props.detail && (
        <text x={NODE_W / 2} y={39} text-anchor="middle" class="kind">
          {t(n.kind)}
        </text>
      )}
      {ports(n).map((p) => (
        <g key={p.handle ?? "out"} class="port" data-port={p.handle ?? ""} onPointerDown={(e) => props.onPortDown(e, n, p.handle)}>
          <circle cx={p.dx} cy={NODE_H} r={6} />
          {p.handle && props.detail && (
            <text x={p.dx} y={NODE_H + 18} text-anchor="middle" class="branch">
              {p.label.length > 10 ? `${p.label.slice(0, 9)}…` : p.label}
            </text>
          )}
        </g>
      ))}
    </g>
  );
});

type Drag =
  | { kind: "node"; id: string; dx: number; dy: number; x: number; y: number; moved: boolean }
  | { kind: "port"; id: string; handle?: string; x: number; y: number }
  | { kind: "pan"; sx: number; sy: number; vx: number; vy: number };

export function Canvas(p: CanvasProps) {
  const svg = useRef<SVGSVGElement>(null);
  const [drag, setDrag] = useState<Drag | null>(null);
  const { view } = p;
  const toModel = (e: PointerEvent | WheelEvent) => {
    const r = svg.current!.getBoundingClientRect();
    return { x: (e.clientX - r.left - view.x) / view.k, y: (e.clientY - r.top - view.y) / view.k };
  };
  const at = (n: MNode) => (drag?.kind === "node" && drag.id === n.id ? { x: drag.x, y: drag.y } : { x: n.x, y: n.y });
  const byId = new Map(p.model.nodes.map((n) => [n.id, n]));
  const hit = (x: number, y: number) => p.model.nodes.find((n) => x >= n.x && x <= n.x + NODE_W && y >= n.y && y <= n.y + NODE_H);

  const onDown = (e: PointerEvent, n: MNode) => {
    if (e.button !== 0) return;
    e.stopPropagation();
    const m = toModel(e);
    svg.current!.setPointerCapture(e.pointerId);
    p.onSelect(n.id);
    setDrag({ kind: "node", id: n.id, dx: m.x - n.x, dy: m.y - n.y, x: n.x, y: n.y, moved: false });
  };
  const onPortDown = (e: PointerEvent, n: MNode, handle?: string) => {
    if (e.button !== 0) return;
    e.stopPropagation();
    svg.current!.setPointerCapture(e.pointerId);
    const m = toModel(e);
    setDrag({ kind: "port", id: n.id, handle, x: m.x, y: m.y });
  };
  const onBgDown = (e: PointerEvent) => {
    if (e.button !== 0) return;
    svg.current!.setPointerCapture(e.pointerId);
    setDrag({ kind: "pan", sx: e.clientX, sy: e.clientY, vx: view.x, vy: view.y });
  };
  const onMove = (e: PointerEvent) => {
    if (!drag) return;
    if (drag.kind === "pan") return p.onView({ ...view, x: drag.vx + e.clientX - drag.sx, y: drag.vy + e.clientY - drag.sy });
    const m = toModel(e);
    if (drag.kind === "node") setDrag({ ...drag, x: m.x - drag.dx, y: m.y - drag.dy, moved: true });
    else setDrag({ ...drag, x: m.x, y: m.y });
  };
  const onUp = (e: PointerEvent) => {
    if (!drag) return;
    if (drag.kind === "node" && drag.moved) p.onMove(drag.id, drag.x, drag.y);
    if (drag.kind === "port") {
      const m = toModel(e);
      const target = hit(m.x, m.y);
      if (target && target.id !== drag.id) p.onConnect(drag.id, target.id, drag.handle);
    }
    if (drag.kind === "pan" && Math.abs(e.clientX - drag.sx) + Math.abs(e.clientY - drag.sy) < 3) p.onSelect("");
    setDrag(null);
  };
  // Delete on a focused node removes the element that has the focus: the canvas takes it first,
  // so the keys that follow (Ctrl+Z) still reach the designer.
  const onKey = (e: KeyboardEvent) => {
    if ((e.key === "Delete" || e.key === "Backspace") && e.target !== svg.current) svg.current?.focus();
    p.onKey(e);
  };
  const onWheel = (e: WheelEvent) => {
    e.preventDefault();
    const r = svg.current!.getBoundingClientRect();
    const k = Math.min(3, Math.max(0.2, view.k * (e.deltaY < 0 ? 1.1 : 1 / 1.1)));
    const px = e.clientX - r.left;
    const py = e.clientY - r.top;
    p.onView({ k, x: px - ((px - view.x) * k) / view.k, y: py - ((py - view.y) * k) / view.k });
  };
  const edge = (e: MEdge) => {
    const a = byId.get(e.source);
    const b = byId.get(e.target);
    if (!a || !b) return null;
    const port = ports(a).find((x) => x.handle === e.handle) ?? ports(a)[0];
    const pa = { ...a, ...at(a) };
    const pb = { ...b, ...at(b) };
    return <path key={e.id} data-edge={e.id} data-source={e.source} data-target={e.target} d={edgePath(pa, pb, port?.dx ?? NODE_W / 2)} class="dedge" marker-end="url(#darrow)" />;
  };
  const src = drag?.kind === "port" ? byId.get(drag.id) : undefined;
  const srcPort = src ? (ports(src).find((x) => x.handle === (drag as { handle?: string }).handle) ?? ports(src)[0]) : undefined;
  return (
    <svg
      ref={svg}
      class={`designer-canvas${drag?.kind === "pan" ? " panning" : ""}`}
      role="application"
      aria-label={t("Flow canvas: Tab to a node, arrows move it, Delete removes it; Ctrl+Z undoes, Ctrl+Y redoes, + and − zoom.")}
      tabindex={0}
      onPointerDown={onBgDown}
      onPointerMove={onMove}
      onPointerUp={onUp}
      onPointerCancel={() => setDrag(null)}
      onWheel={onWheel}
      onKeyDown={onKey}
    >
      <defs>
        <marker id="darrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" class="arrow" />
        </marker>
      </defs>
      <g transform={`translate(${view.x} ${view.y}) scale(${view.k})`}>
        {p.model.edges.map(edge)}
        {src && drag?.kind === "port" && (
          <path class="dedge pending" d={`M ${at(src).x + (srcPort?.dx ?? 0)} ${at(src).y + NODE_H} L ${drag.x} ${drag.y}`} />
        )}
        {p.model.nodes.map((n) => {
          const q = at(n);
          return (
            <NodeShape
              key={n.id}
              n={n}
              x={q.x}
              y={q.y}
              detail={view.k >= DETAIL_K}
              selected={p.selected === n.id}
              invalid={p.invalid.has(n.id)}
              changed={p.changed.has(n.id)}
              onDown={onDown}
              onPortDown={onPortDown}
              onFocus={p.onSelect}
            />
          );
        })}
      </g>
    </svg>
  );
}

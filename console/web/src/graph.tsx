// FlowGraph draws an approval flow as SVG: the designer's nodes at their positions (ranked into
// rows and columns so any coordinate scale lays out evenly), the edges between them, and each
// node's progress as its colour and a text status (never colour alone).
import { t, tk } from "./i18n";

export interface GraphNode {
  id: string;
  kind: string;
  position: { x: number; y: number };
  name: string;
  /** progress: pending, active, passed, rejected, returned, canceled, skipped — or "" (a definition). */
  status: string;
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
}

const W = 150;
const H = 48;
const GAP_X = 40;
const GAP_Y = 44;

/** ranks maps each distinct coordinate to its index in ascending order. */
function ranks(values: number[]): Map<number, number> {
  return new Map([...new Set(values)].sort((a, b) => a - b).map((v, i) => [v, i]));
}

// Progress statuses as the server names them, listed so the translations see them.
export const PROGRESS = [tk("pending"), tk("active"), tk("passed"), tk("rejected"), tk("returned"), tk("canceled"), tk("skipped")];
// Node kinds of the designer.
export const KINDS = [tk("start"), tk("approval"), tk("handle"), tk("condition"), tk("cc"), tk("end")];

/** progressLabel is a progress status in words: the node being decided is "current", an unreached one "not reached". */
const progressLabel = (s: string) => (s === "active" ? t("current") : s === "pending" ? t("not reached") : t(s));

export function FlowGraph({ nodes, edges, label }: { nodes: GraphNode[]; edges: GraphEdge[]; label: string }) {
  if (!nodes.length) return <p class="muted">{t("The flow has no nodes.")}</p>;
  const col = ranks(nodes.map((n) => n.position.x));
  const row = ranks(nodes.map((n) => n.position.y));
  const at = new Map(
    nodes.map((n) => [n.id, { x: col.get(n.position.x)! * (W + GAP_X) + 8, y: row.get(n.position.y)! * (H + GAP_Y) + 8 }]),
  );
  const status = new Map(nodes.map((n) => [n.id, n.status]));
  const width = col.size * (W + GAP_X) - GAP_X + 16;
  const height = row.size * (H + GAP_Y) - GAP_Y + 16;
  return (
    <figure class="flow-graph">
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={label}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" class="arrow" />
          </marker>
        </defs>
        {edges.map((e) => {
          const a = at.get(e.source);
          const b = at.get(e.target);
          if (!a || !b) return null;
          const down = b.y > a.y;
          const x1 = a.x + W / 2;
          const y1 = down ? a.y + H : a.y + H / 2;
          const x2 = b.x + W / 2;
          const y2 = down ? b.y : b.y + H / 2;
          const my = (y1 + y2) / 2;
          const d = down ? `M ${x1} ${y1} C ${x1} ${my}, ${x2} ${my}, ${x2} ${y2}` : `M ${x1} ${y1} L ${x2} ${y2}`;
          const done = status.get(e.target);
          return <path key={e.id} d={d} class={`edge ${done && done !== "pending" && done !== "skipped" ? "taken" : ""}`} marker-end="url(#arrow)" />;
        })}
        {nodes.map((n) => {
          const p = at.get(n.id)!;
          return (
            <g key={n.id} class={`node ${n.kind} ${n.status || "plain"}`} data-node={n.id} data-status={n.status} transform={`translate(${p.x} ${p.y})`}>
              <title>{`${n.name} — ${t(n.kind)}${n.status ? `: ${progressLabel(n.status)}` : ""}`}</title>
              <rect width={W} height={H} rx={n.kind === "start" || n.kind === "end" ? H / 2 : 6} />
              <text x={W / 2} y={n.status ? 20 : H / 2 + 4} text-anchor="middle" class="name">
                {n.name.length > 18 ? `${n.name.slice(0, 17)}…` : n.name}
              </text>
              {n.status && (
                <text x={W / 2} y={37} text-anchor="middle" class="status">
                  {progressLabel(n.status)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      {nodes.some((n) => n.status) && (
      <figcaption class="legend">
        {["passed", "active", "pending", "skipped", "rejected"].map((s) => (
          <span key={s} class={`key ${s}`}>
            {progressLabel(s)}
          </span>
        ))}
      </figcaption>
      )}
    </figure>
  );
}

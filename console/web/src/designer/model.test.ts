// The flow designer's model against the parity fixture the approval tests deploy
// (approval/testdata/designer_flow.json, the original designer's document): it opens and is
// saved back deep-equal, and an edit at one node changes that node only.
import { describe, expect, it } from "vitest";
import parity from "../../../../approval/testdata/designer_flow.json";
import { addNode, connect, diff, fromDoc, historyOf, moveNode, push, redo, removeNode, reorderBranch, setBranches, setData, toDoc, undo, type Branch, type FlowDoc } from "./model";

const fixture = parity as unknown as { flowDefinition: FlowDoc };
const doc = () => structuredClone(fixture.flowDefinition);

describe("flow document round trip", () => {
  it("saves the original designer's flow back deep-equal", () => {
    expect(toDoc(fromDoc(doc()))).toStrictEqual(fixture.flowDefinition);
  });
  it("keeps members it does not know", () => {
    const d = doc() as FlowDoc & { viewport?: unknown };
    d.viewport = { x: 1, y: 2, zoom: 1 };
    (d.nodes[0] as Record<string, unknown>).width = 150;
    d.nodes[0]!.position = { x: 5, y: 6, z: 1 } as { x: number; y: number };
    (d.edges[0] as Record<string, unknown>).animated = true;
    expect(toDoc(fromDoc(d))).toStrictEqual(d);
  });
  it("changes only the node edited", () => {
    const m = fromDoc(doc());
    const a2 = m.nodes.find((n) => n.id === "a2")!;
    const edited = toDoc(moveNode(setData(m, "a2", { ...a2.data, passRule: "all" }), "a2", 40, 300));
    expect(diff(fixture.flowDefinition, edited)).toStrictEqual([{ what: "node", id: "a2", how: "changed", keys: ["passRule", "position"] }]);
    expect(edited.edges).toStrictEqual(fixture.flowDefinition.edges);
  });
});

describe("editing", () => {
  it("adds, connects and removes nodes", () => {
    let m = fromDoc(doc());
    let id: string;
    [m, id] = addNode(m, "approval", 10, 20.4, "Check");
    expect(m.nodes.at(-1)).toMatchObject({ id, kind: "approval", x: 10, y: 20, data: { name: "Check", assignees: [] } });
    m = connect(m, "a", id); // a has one way out: the edge e2 is re-aimed
    expect(m.edges.filter((e) => e.source === "a")).toStrictEqual([{ id: "e2", source: "a", target: id, data: undefined, rest: {} }]);
    m = connect(m, id, "c");
    m = connect(m, "c", "e", "many"); // a branch keeps its own edge
    expect(m.edges.find((e) => e.source === "c" && e.handle === "many")).toMatchObject({ id: "e4", target: "e" });
    m = removeNode(m, id);
    expect(m.edges.some((e) => e.source === id || e.target === id)).toBe(false);
    expect(m.nodes.some((n) => n.id === id)).toBe(false);
  });
  it("a new condition node has a branch and a default branch", () => {
    const [m, id] = addNode(fromDoc(doc()), "condition", 0, 0, "If");
    const b = m.nodes.find((n) => n.id === id)!.data!.branches as unknown as Branch[];
    expect(b.length).toBe(2);
    expect(b.filter((x) => x.isDefault).length).toBe(1);
  });
  it("orders branches by priority and drops the edges of removed branches", () => {
    const m = fromDoc(doc());
    const branches = m.nodes.find((n) => n.id === "c")!.data!.branches as unknown as Branch[];
    const moved = reorderBranch(branches, 1, -1);
    expect(moved.map((b) => [b.id, b.priority])).toStrictEqual([["many", 1], ["big", 2], ["dflt", 3]]);
    expect(reorderBranch(branches, 1, 1)).toStrictEqual(branches); // the default stays last
    const fewer = setBranches(m, "c", branches.filter((b) => b.id !== "many"));
    expect(fewer.edges.some((e) => e.id === "e4")).toBe(false);
  });
  it("undoes and redoes", () => {
    const m0 = fromDoc(doc());
    let h = historyOf(m0);
    h = push(h, moveNode(h.present, "a", 1, 1));
    h = push(h, removeNode(h.present, "cc"));
    h = undo(h);
    expect(h.present.nodes.some((n) => n.id === "cc")).toBe(true);
    h = undo(h);
    expect(h.present).toBe(m0);
    expect(undo(h)).toBe(h);
    h = redo(redo(h));
    expect(h.present.nodes.some((n) => n.id === "cc")).toBe(false);
    expect(h.future.length).toBe(0);
  });
  it("diffs added and removed nodes", () => {
    const [m] = addNode(removeNode(fromDoc(doc()), "cc"), "end", 0, 0, "End 2");
    const d = diff(fixture.flowDefinition, toDoc(m));
    expect(d).toContainEqual({ what: "node", id: "cc", how: "removed", keys: [] });
    expect(d).toContainEqual({ what: "node", id: "end1", how: "added", keys: [] });
    expect(d).toContainEqual({ what: "edge", id: "e5", how: "removed", keys: [] });
  });
});

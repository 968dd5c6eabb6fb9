// The form designer's model round-trips the parity fixtures' form documents: the form-editor
// documents the approval module's Go tests deploy (string constants holding "presentations")
// and the formSchema of every golden detail answer under approval/testdata. Unchanged, each
// comes back deep-equal (nothing lost, nothing added); an edit changes only what it names.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { edit, indent, insert, keys, move, outdent, newBlock, nodeAt, staticOptions, toDoc, toModel, withOptions, withRule } from "./formdoc";
import { parseForm } from "./pages/approval-form";

const approval = new URL("../../../approval/", import.meta.url).pathname;

function goFiles(dir: string, out: string[] = []): string[] {
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) goFiles(p, out);
    else if (f.endsWith("_test.go")) out.push(p);
  }
  return out;
}

function fixtures(): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const f of goFiles(approval)) {
    for (const m of readFileSync(f, "utf8").matchAll(/`(\{[^`]*"presentations"[^`]*\})`/g)) {
      try {
        out.push([`${f.slice(approval.length)}@${m.index}`, JSON.parse(m[1])]);
      } catch {
        /* a deliberately malformed document or a fragment built by concatenation */
      }
    }
  }
  const golden = join(approval, "testdata");
  for (const f of readdirSync(golden).filter((f: string) => f.endsWith(".json"))) {
    const walk = (v: unknown, path: string) => {
      if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
      else if (v && typeof v === "object")
        for (const [k, x] of Object.entries(v)) {
          if (k === "formSchema" && x && typeof x === "object") out.push([`testdata/${f}${path}`, x]);
          else walk(x, `${path}.${k}`);
        }
    };
    walk(JSON.parse(readFileSync(join(golden, f), "utf8")), "");
  }
  return out;
}

const all = fixtures();

describe("form designer model", () => {
  it("finds the parity fixtures", () => {
    expect(all.length).toBeGreaterThan(10);
    expect(all.some(([, d]) => JSON.stringify(d).includes('"subform"'))).toBe(true);
    expect(all.some(([, d]) => JSON.stringify(d).includes('"tabs"'))).toBe(true);
  });

  it.each(all)("round-trips %s unchanged", (_, doc) => {
    const copy = structuredClone(doc);
    expect(toDoc(toModel(doc))).toStrictEqual(copy);
    expect(doc).toStrictEqual(copy); // the model never writes into the document it read
  });

  it("changes only what an edit names, and undoing it restores the document", () => {
    const [, doc] = all.find(([n]) => n.includes("formschema_test.go"))!;
    const m = toModel(doc);
    // n3 "title" sits at pc[1] (section) → children[0]
    const path = [1, 0];
    expect(nodeAt(m, path)?.raw.key).toBe("title");
    const changed = toDoc(edit(m, path, (n) => ({ ...n, raw: withRule(n.raw, "minLength", 3) })));
    const field = parseForm(changed).find((f) => f.key === "title")!;
    expect(field.rule).toStrictEqual({ required: true, maxLength: 80, minLength: 3, pattern: "^[^<>]*$", message: "No angle brackets" });
    const back = toDoc(edit(toModel(changed), path, (n) => ({ ...n, raw: withRule(n.raw, "minLength", undefined) })));
    expect(back).toStrictEqual(doc);
  });

  it("carries the pc fields' changes to a mobile presentation, and nothing else", () => {
    const doc = {
      version: 2,
      presentations: {
        pc: { children: [{ id: "p1", type: "textfield", key: "name", label: "Name", validate: { required: true } }, { id: "p2", type: "number", key: "age", label: "Age" }] },
        mobile: {
          theme: "m",
          children: [
            { id: "m0", type: "section", children: [{ id: "m1", type: "textfield", key: "name", label: "Name", style: { w: 1 }, validate: { required: true } }] },
            { id: "m2", type: "number", key: "age", label: "Age" },
            { id: "m3", type: "textfield", key: "phoneOnly", label: "Phone only" },
          ],
        },
      },
    };
    expect(toDoc(toModel(doc))).toStrictEqual(doc); // untouched: unchanged
    let m = toModel(doc);
    m = edit(m, [0], (n) => ({ ...n, raw: withRule({ ...n.raw, label: "Full name" }, "maxLength", 40) }));
    m = edit(m, [1], () => null);
    m = insert(m, [], newBlock("date", keys(m.nodes)));
    const out = toDoc(m) as { presentations: { mobile: { theme: string; children: Record<string, unknown>[] } } };
    const mobile = out.presentations.mobile;
    expect(mobile.theme).toBe("m");
    // the changed field keeps its mobile id and styling, with pc's label and rules
    expect(mobile.children[0]).toStrictEqual({
      id: "m0",
      type: "section",
      children: [{ id: "m1", type: "textfield", key: "name", label: "Full name", style: { w: 1 }, validate: { required: true, maxLength: 40 } }],
    });
    // the removed field is gone, the mobile-only one stays, the new one is appended
    expect(mobile.children.map((b) => b.key)).toStrictEqual([undefined, "phoneOnly", "date1"]);
  });

  it("adds, orders and removes fields, columns and options", () => {
    let m = toModel({ version: 2, presentations: { pc: { children: [] } } });
    m = insert(m, [], newBlock("section", keys(m.nodes)));
    m = insert(m, [0], newBlock("textfield", keys(m.nodes)));
    m = insert(m, [0], newBlock("number", keys(m.nodes)));
    m = insert(m, [], newBlock("subform", keys(m.nodes)));
    m = insert(m, [1], newBlock("number", keys(m.nodes)));
    m = insert(m, [], newBlock("select", keys(m.nodes)));
    m = edit(m, [2], (n) => ({ ...n, raw: withOptions(n.raw, [{ label: "A", value: "a" }]) }));
    m = move(m, [0, 1], -1);
    expect(parseForm(toDoc(m)).map((f) => `${f.key}:${f.type}`)).toStrictEqual(["number1:number", "textfield1:textfield", "table1:subform", "select1:select"]);
    expect(parseForm(toDoc(m))[2].columns?.map((c) => c.key)).toStrictEqual(["column1", "number2"]);
    expect(staticOptions(nodeAt(m, [2])!.raw)).toStrictEqual([{ label: "A", value: "a" }]);
    m = edit(m, [0, 0], () => null);
    expect([...keys(m.nodes)]).toStrictEqual(["textfield1", "table1", "column1", "number2", "select1"]);
    expect(move(m, [0, 0], -1)).toBe(m); // the first cannot move up
  });

  it("moves fields into the section above and out again", () => {
    let m = toModel({ presentations: { pc: { children: [] } } });
    m = insert(m, [], newBlock("section", keys(m.nodes)));
    m = insert(m, [], newBlock("textfield", keys(m.nodes)));
    m = insert(m, [], newBlock("number", keys(m.nodes)));
    expect(indent(m, [0])).toBeNull(); // nothing above
    expect(indent(m, [2])).toBeNull(); // a text input is no container
    const into = indent(m, [1])!;
    expect(into.path).toStrictEqual([0, 0]);
    expect(nodeAt(into.model, into.path)?.raw.key).toBe("textfield1");
    const again = indent(into.model, [1])!;
    expect(again.path).toStrictEqual([0, 1]);
    expect(parseForm(toDoc(again.model)).map((f) => f.key)).toStrictEqual(["textfield1", "number1"]);
    const out = outdent(again.model, [0, 0])!;
    expect(out.path).toStrictEqual([1]);
    expect(toDoc(out.model)).toMatchObject({ presentations: { pc: { children: [{ type: "section", children: [{ key: "number1" }] }, { key: "textfield1" }] } } });
    expect(outdent(out.model, [1])).toBeNull(); // already at the top
    // into a tabs container's last tab, and a table's columns stay in their table
    const [, doc] = all.find(([n]) => n.includes("formschema_test.go"))!;
    const f = toModel(doc);
    expect(outdent(f, [3, "c", 0])).toBeNull();
    const tabbed = outdent(f, [2, "t1", 0])!;
    expect(tabbed.path).toStrictEqual([3]);
    expect(nodeAt(tabbed.model, [3])?.raw.key).toBe("urgency");
    const back = indent(tabbed.model, [3])!;
    expect(back.path).toStrictEqual([2, "t1", 4]);
  });

  it("keeps options that come from a data source", () => {
    const doc = all.find(([n]) => n.includes("formschema_test.go"))![1];
    const dept = toModel(doc).nodes[1].children![1].children![2];
    expect(dept.raw.key).toBe("dept");
    expect(staticOptions(dept.raw)).toBeNull();
  });
});

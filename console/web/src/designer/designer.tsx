// The flow designer page (issue #46 item 1), loaded on demand (a dynamic import from the
// administration's Flows part). It opens a flow's newest version (or a new start → approval →
// end flow), edits it on the canvas and in the properties panel, checks it after every change
// with the server's own deploy rules (svc's approval/flow validate_design) and marks the nodes
// concerned, saves it as a draft version (deploy), publishes it, and compares it with the
// published version. What it saves is the original designer's document (model.ts).
import { useEffect, useMemo, useState } from "preact/hooks";
import { call } from "../api";
import type { DesignProblem, Flow } from "../api/ops.gen";
import { t, useLang } from "../i18n";
import { P } from "../perms";
import { can } from "../session";
import { ErrorBox, Notice, useAction } from "../ui";
import { Canvas, NODE_H, NODE_W, type View } from "./canvas";
import {
  addNode, connect, diff, emptyFlow, fromDoc, historyOf, moveNode, NODE_KINDS, push, redo, removeNode, setBranches, setData, toDoc, undo,
  type Change, type FlowDoc, type History, type Json, type MNode,
} from "./model";
import { PropsPanel, type FormFieldRef } from "./props";
import { EMPTY_FORM, FormDesigner } from "../pages/approval-formdesign";

type Tab = "flow" | "form" | "compare";

interface Loaded {
  doc: FlowDoc;
  form: Json | null;
  version: number;
}

/** load reads the flow's newest version (the edit seed), or a new flow's template. */
async function load(flow: Flow): Promise<Loaded> {
  const versions = await call("approval/flow/find_versions", { flowId: flow.id });
  const last = versions[0];
  if (!last) return { doc: emptyFlow({ start: t("Start"), approval: t("Approval"), end: t("End") }), form: null, version: 0 };
  const g = await call("approval/flow/get_graph", { flowId: flow.id, versionId: last.id });
  return { doc: g.version?.flowSchema as unknown as FlowDoc, form: (g.version?.formSchema as unknown as Json) ?? null, version: last.version };
}

/** fit centres the flow in a canvas of about 900 × 560 pixels. */
function fit(nodes: MNode[]): View {
  if (!nodes.length) return { x: 40, y: 40, k: 1 };
  const xs = nodes.map((n) => n.x);
  const ys = nodes.map((n) => n.y);
  const w = Math.max(...xs) - Math.min(...xs) + NODE_W;
  const h = Math.max(...ys) - Math.min(...ys) + NODE_H + 30;
  const k = Math.min(1, Math.max(0.2, Math.min(860 / w, 520 / h)));
  return { k, x: 20 - Math.min(...xs) * k, y: 20 - Math.min(...ys) * k };
}

/** Designer edits one flow (a new flow: a new Designer, keyed by the flow's id). */
export function Designer({ flow, onClose }: { flow: Flow; onClose: () => void }) {
  useLang();
  // The load starts with the first render: an effect would start it only after a frame is drawn.
  const [loading] = useState(() => {
    const p = load(flow);
    p.catch(() => undefined); // handled by the effect below, which may attach after a refusal
    return p;
  });
  const [seed, setSeed] = useState<Loaded | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    loading.then(
      (s) => live && setSeed(s),
      (e) => live && setLoadError(e),
    );
    return () => void (live = false);
  }, [loading]);
  if (loadError) return <ErrorBox error={loadError} />;
  if (!seed) return <p class="muted">{t("Loading…")}</p>;
  return <Editor flow={flow} seed={seed} onClose={onClose} />;
}

function Editor({ flow, seed, onClose }: { flow: Flow; seed: Loaded; onClose: () => void }) {
  const [h, setH] = useState<History>(() => historyOf(fromDoc(seed.doc)));
  const [view, setView] = useState<View>(() => fit(h.present.nodes));
  const [selected, setSelected] = useState("");
  const [tab, setTab] = useState<Tab>("flow");
  const [form, setForm] = useState<Json | null>(seed.form);
  const [formText, setFormText] = useState(seed.form ? JSON.stringify(seed.form, null, 2) : "");
  const [problems, setProblems] = useState<DesignProblem[] | null>(null);
  const [fields, setFields] = useState<FormFieldRef[]>([]);
  const [draft, setDraft] = useState<{ id: string; version: number; doc: string } | null>(null);
  const [published, setPublished] = useState<FlowDoc | null | undefined>(undefined);
  // Whether users can start the flow: a new flow is inactive until activated, which the bar
  // offers once a version is published (or was before).
  const [active, setActive] = useState(flow.isActive);
  const [hasPublished, setHasPublished] = useState(flow.currentVersion > 0);
  const act = useAction();
  const m = h.present;
  const doc = useMemo(() => toDoc(m), [m]);
  const docText = useMemo(() => JSON.stringify({ doc, form }), [doc, form]);
  const edit = (f: (mm: typeof m) => typeof m) => setH((x) => push(x, f(x.present)));

  // Live validation: the server's deploy rules, a moment after the last change.
  useEffect(() => {
    const id = setTimeout(() => {
      call("approval/flow/validate_design", { flowDefinition: doc as unknown as Record<string, unknown>, formSchema: form as unknown as Record<string, unknown> }).then(
        (r) => (setProblems(r.problems), setFields(r.formFields as unknown as FormFieldRef[])),
        (e) => act.setError(e),
      );
    }, 300);
    return () => clearTimeout(id);
  }, [docText]);

  const byNode = useMemo(() => {
    const out = new Map<string, string[]>();
    for (const p of problems ?? []) if (p.nodeId) out.set(p.nodeId, [...(out.get(p.nodeId) ?? []), p.message]);
    return out;
  }, [problems]);
  const invalid = useMemo(() => new Set(byNode.keys()), [byNode]);
  const changes: Change[] = useMemo(() => (published ? diff(published, doc) : []), [published, doc]);
  const changed = useMemo(() => new Set(changes.filter((c) => c.what === "node").map((c) => c.id)), [changes]);
  const node = m.nodes.find((n) => n.id === selected);

  const add = (kind: string) => {
    // Right of everything (never over another node), level with the selected node.
    const at = { x: m.nodes.length ? Math.max(...m.nodes.map((n) => n.x)) + NODE_W + 40 : 0, y: node?.y ?? (m.nodes[0]?.y ?? 0) + 120 };
    const [next, id] = addNode(m, kind, at.x, at.y, t(kind === "approval" ? "Approval" : kind === "handle" ? "Handling" : kind === "cc" ? "Copy" : kind === "condition" ? "Condition" : kind === "start" ? "Start" : "End"));
    setH((x) => push(x, next));
    setSelected(id);
    setView(fit(next.nodes));
  };
  const del = () => selected && (edit((x) => removeNode(x, selected)), setSelected(""));
  const zoom = (f: number) => setView((v) => ({ ...v, k: Math.min(3, Math.max(0.2, v.k * f)) }));
  const onKey = (e: KeyboardEvent) => {
    const mod = e.ctrlKey || e.metaKey;
    if (mod && e.key.toLowerCase() === "z") return e.preventDefault(), setH(e.shiftKey ? redo : undo);
    if (mod && e.key.toLowerCase() === "y") return e.preventDefault(), setH(redo);
    if (e.key === "+" || e.key === "=") return zoom(1.2);
    if (e.key === "-") return zoom(1 / 1.2);
    if (e.key === "0") return setView(fit(m.nodes));
    if ((e.key === "Delete" || e.key === "Backspace") && node) return e.preventDefault(), del();
    const step = e.shiftKey ? 50 : 10;
    const d = ({ ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] } as Record<string, [number, number]>)[e.key];
    if (!d) return;
    e.preventDefault();
    if (node) edit((x) => moveNode(x, node.id, node.x + d[0], node.y + d[1]));
    else setView((v) => ({ ...v, x: v.x - d[0] * 2, y: v.y - d[1] * 2 }));
  };

  const deploy = async () => {
    const v = await call("approval/flow/deploy", { flowId: flow.id, flowDefinition: doc as unknown as Record<string, unknown>, formSchema: form as unknown as Record<string, unknown> });
    setDraft({ id: v.id, version: v.version, doc: docText });
    return v;
  };
  const save = () => act.run(deploy, t("Saved as a draft version."));
  const publish = () =>
    act.run(async () => {
      const v = draft && draft.doc === docText ? draft : await deploy();
      await call("approval/flow/publish_version", { versionId: v.id });
      setDraft(null);
      setPublished(JSON.parse(JSON.stringify(doc)) as FlowDoc);
      setHasPublished(true);
    }, active ? t("Published.") : t("Published. The flow is inactive: activate it so that users can start it."));
  const activate = () =>
    act.run(async () => {
      await call("approval/flow/toggle_active", { flowId: flow.id, isActive: true });
      setActive(true);
    }, t("{name} activated.", { name: flow.name }));
  const openCompare = () => {
    setTab("compare");
    call("approval/flow/get_graph", { flowId: flow.id }).then((g) => setPublished((g.version?.flowSchema as unknown as FlowDoc) ?? null), act.setError);
  };
  const applyForm = () => {
    try {
      const v = formText.trim() ? (JSON.parse(formText) as Json) : null;
      setForm(v);
      act.setError(null);
    } catch {
      act.setError(new Error(t("The form document is not valid JSON.")));
    }
  };
  const flowProblems = (problems ?? []).filter((p) => !p.nodeId);
  const ok = problems !== null && problems.length === 0;
  return (
    <section class="designer" aria-label={t("Flow designer")}>
      <header class="designer-bar">
        <h2>
          {t("Design {name}", { name: flow.name })}
          {seed.version > 0 && <small class="muted"> {t("(from version {n})", { n: seed.version })}</small>}
        </h2>
        <div class="tabs sub" role="tablist" aria-label={t("Designer")}>
          {(["flow", "form", "compare"] as Tab[]).map((k) => (
            <button key={k} type="button" role="tab" aria-selected={tab === k} onClick={() => (k === "compare" ? openCompare() : setTab(k))}>
              {k === "flow" ? t("Flow") : k === "form" ? t("Form") : t("Compare with published")}
            </button>
          ))}
        </div>
        <div class="row-actions">
          <span class={ok ? "badge ok" : "badge bad"} data-valid={ok ? "yes" : "no"} aria-live="polite">
            {problems === null ? t("Checking…") : ok ? t("Ready to deploy") : problems.length === 1 ? t("1 problem") : t("{n} problems", { n: problems.length })}
          </span>
          {can(P.approvalFlowDeploy) && (
            <button type="button" disabled={act.busy || !ok} onClick={() => void save()}>
              {t("Save as draft")}
            </button>
          )}
          {can(P.approvalFlowPublish) && (
            <button type="button" class="primary" disabled={act.busy || !ok} onClick={() => void publish()}>
              {t("Publish")}
            </button>
          )}
          {!active && hasPublished && can(P.approvalFlowUpdate) && (
            <button type="button" data-action="activate" disabled={act.busy} onClick={() => void activate()}>
              {t("Activate")}
            </button>
          )}
          <button type="button" onClick={onClose}>
            {t("Close the designer")}
          </button>
        </div>
      </header>
      <ErrorBox error={act.error} />
      <Notice text={act.notice} />
      {flowProblems.length > 0 && (
        <ul class="problems" role="alert" data-problems="flow">
          {flowProblems.map((p, i) => (
            <li key={i}>{p.message}</li>
          ))}
        </ul>
      )}
      {tab === "flow" && (
        <div class="designer-main">
          <div class="designer-left">
            <div class="toolbar" role="toolbar" aria-label={t("Add a node")}>
              {NODE_KINDS.map((k) => (
                <button key={k} type="button" data-add={k} onClick={() => add(k)}>
                  + {t(k)}
                </button>
              ))}
              <span class="sep" />
              <button type="button" disabled={!h.past.length} onClick={() => setH(undo)} aria-keyshortcuts="Control+Z">
                {t("Undo")}
              </button>
              <button type="button" disabled={!h.future.length} onClick={() => setH(redo)} aria-keyshortcuts="Control+Y">
                {t("Redo")}
              </button>
              <button type="button" disabled={!node} onClick={del} aria-keyshortcuts="Delete">
                {t("Delete")}
              </button>
              <button type="button" onClick={() => zoom(1.2)} aria-label={t("Zoom in")}>
                +
              </button>
              <button type="button" onClick={() => zoom(1 / 1.2)} aria-label={t("Zoom out")}>
                −
              </button>
              <button type="button" onClick={() => setView(fit(m.nodes))}>
                {t("Fit")}
              </button>
            </div>
            <Canvas
              model={m}
              view={view}
              selected={selected}
              invalid={invalid}
              changed={changed}
              onView={setView}
              onSelect={setSelected}
              onMove={(id, x, y) => edit((mm) => moveNode(mm, id, x, y))}
              onConnect={(s, tg, hd) => edit((mm) => connect(mm, s, tg, hd))}
              onDelete={(id) => edit((mm) => removeNode(mm, id))}
              onKey={onKey}
            />
          </div>
          <aside class="designer-right" aria-label={t("Properties")}>
            {node ? (
              <PropsPanel
                key={node.id}
                model={m}
                node={node}
                fields={fields}
                problems={byNode.get(node.id) ?? []}
                onData={(data) => edit((mm) => setData(mm, node.id, data))}
                onConnect={(target, handle) => edit((mm) => connect(mm, node.id, target, handle))}
                onBranches={(b) => edit((mm) => setBranches(mm, node.id, b))}
              />
            ) : (
              <p class="muted">{t("Select a node to edit its settings, or add one.")}</p>
            )}
          </aside>
        </div>
      )}
      {tab === "form" && (
        <div class="designer-form">
          <p class="muted">{t("The start form. Its fields are what permissions, assignees and conditions can name.")}</p>
          <FormDesigner
            value={form ?? EMPTY_FORM}
            onChange={(d) => (setForm(d as Json), setFormText(JSON.stringify(d, null, 2)))}
          />
          <details class="designer-form-json">
            <summary>{t("Document (JSON)")}</summary>
            <p class="muted">{t("The start form as the original's form editor writes it (JSON). Its fields are what permissions, assignees and conditions can name.")}</p>
            <textarea class="mono" rows={16} aria-label={t("Form document")} value={formText} onInput={(e) => setFormText(e.currentTarget.value)} />
            <div class="row-actions">
              <button type="button" onClick={applyForm}>
                {t("Apply the form")}
              </button>
            </div>
          </details>
          <h3>{t("Form fields")}</h3>
          <ul data-fields>
            {fields.map((f) => (
              <li key={f.key}>
                <span class="mono">{f.key}</span> — {f.label} ({f.kind})
              </li>
            ))}
          </ul>
        </div>
      )}
      {tab === "compare" && (
        <div class="designer-compare">
          {published === undefined && <p class="muted">{t("Loading…")}</p>}
          {published === null && <p class="muted">{t("No published version.")}</p>}
          {published && !changes.length && <p data-changes="0">{t("The design equals the published version.")}</p>}
          {published && changes.length > 0 && (
            <table data-changes={changes.length}>
              <thead>
                <tr>
                  <th>{t("Part")}</th>
                  <th>{t("Id")}</th>
                  <th>{t("Change")}</th>
                  <th>{t("Settings")}</th>
                </tr>
              </thead>
              <tbody>
                {changes.map((c) => (
                  <tr key={c.what + c.id} data-change={c.id}>
                    <td>{c.what === "node" ? t("Node") : t("Edge")}</td>
                    <td class="mono">{c.id}</td>
                    <td>{c.how === "added" ? t("added") : c.how === "removed" ? t("removed") : t("changed")}</td>
                    <td class="mono">{c.keys.join(", ")}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </section>
  );
}

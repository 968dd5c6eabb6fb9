// Schema: the primary data source's tables and views; one table's columns, keys and indexes.
import { useState } from "preact/hooks";
import { call } from "../api";
import type { Table as Named, View } from "../api/ops.gen";
import { t, useLang } from "../i18n";
import { Card, ErrorBox, Loading, useAsync } from "../ui";


const cols = (c: string[]) => c.map((x) => x || t("(expression)")).join(", ");

export function Schema() {
  useLang();
  const tables = useAsync(() => call("sys/schema/list_tables"), []);
  const views = useAsync(() => call("sys/schema/list_views"), []);
  const [filter, setFilter] = useState("");
  const [picked, setPicked] = useState<{ kind: "table" | "view"; name: string } | null>(null);
  const match = (n: Named) => n.name.toLowerCase().includes(filter.toLowerCase());
  return (
    <div class="page">
      <h1>{t("Schema")}</h1>
      <div class="split">
        <Card class="list-card" title={t("Tables and views")}>
          <label>
            <span class="sr-only">{t("Filter")}</span>
            <input type="search" placeholder={t("Filter by name")} value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
          </label>
          <ErrorBox error={tables.error ?? views.error} />
          <Loading when={tables.loading && !tables.data} />
          <h3>
            {t("Tables")} <span class="muted">({tables.data?.length ?? 0})</span>
          </h3>
          <ul class="pick">
            {(tables.data ?? []).filter(match).map((tb) => (
              <li key={tb.name}>
                <button
                  type="button"
                  aria-pressed={picked?.kind === "table" && picked.name === tb.name}
                  onClick={() => setPicked({ kind: "table", name: tb.name })}
                >
                  {tb.name}
                </button>
              </li>
            ))}
          </ul>
          <h3>
            {t("Views")} <span class="muted">({views.data?.length ?? 0})</span>
          </h3>
          <ul class="pick">
            {(views.data ?? []).filter(match).map((v) => (
              <li key={v.name}>
                <button type="button" aria-pressed={picked?.kind === "view" && picked.name === v.name} onClick={() => setPicked({ kind: "view", name: v.name })}>
                  {v.name}
                </button>
              </li>
            ))}
            {views.data && !views.data.length && <li class="muted">{t("No views.")}</li>}
          </ul>
        </Card>
        <div class="detail">
          {!picked && <p class="muted">{t("Choose a table or a view.")}</p>}
          {picked?.kind === "table" && <TableDetail name={picked.name} />}
          {picked?.kind === "view" && <ViewDetail view={(views.data ?? []).find((v) => v.name === picked.name)} />}
        </div>
      </div>
    </div>
  );
}

function TableDetail({ name }: { name: string }) {
  const tb = useAsync(() => call("sys/schema/get_table_schema", { name }), [name]);
  const d = tb.data;
  return (
    <>
      <ErrorBox error={tb.error} />
      <Loading when={tb.loading} />
      {d && d.name === name && (
        <>
          <Card title={<h2 class="mono">{d.name}</h2>}>
            {d.comment && <p>{d.comment}</p>}
            <div class="table-wrap">
              <table>
                <caption class="sr-only">{t("Columns")}</caption>
                <thead>
                  <tr>
                    <th>{t("Column")}</th>
                    <th>{t("Type")}</th>
                    <th>{t("Null")}</th>
                    <th>{t("Default")}</th>
                    <th>{t("Key")}</th>
                    <th>{t("Comment")}</th>
                  </tr>
                </thead>
                <tbody>
                  {d.columns.map((c) => (
                    <tr key={c.name}>
                      <td class="mono">{c.name}</td>
                      <td class="mono">{c.type}</td>
                      <td>{c.nullable ? t("yes") : t("no")}</td>
                      <td class="mono">{c.default ?? ""}</td>
                      <td>
                        {c.isPrimaryKey ? "PK" : ""}
                        {c.isAutoIncrement ? ` ${t("auto")}` : ""}
                      </td>
                      <td>{c.comment ?? ""}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Card>
          <Card title={t("Keys and indexes")}>
            <ul class="plain keys">
              {d.primaryKey && (
                <li>
                  <strong>{t("Primary key")}</strong> {d.primaryKey.name && <span class="mono">{d.primaryKey.name}</span>} ({cols(d.primaryKey.columns)})
                </li>
              )}
              {(d.uniqueKeys ?? []).map((u) => (
                <li key={`u-${u.name}`}>
                  <strong>{t("Unique")}</strong> <span class="mono">{u.name}</span> ({cols(u.columns)}){u.predicate ? ` WHERE ${u.predicate}` : ""}
                </li>
              ))}
              {(d.indexes ?? []).map((i) => (
                <li key={`i-${i.name}`}>
                  <strong>{t("Index")}</strong> <span class="mono">{i.name}</span> ({cols(i.columns)})
                </li>
              ))}
              {(d.foreignKeys ?? []).map((f) => (
                <li key={`f-${f.name}`}>
                  <strong>{t("Foreign key")}</strong> <span class="mono">{f.name}</span> ({cols(f.columns)}) → <span class="mono">{f.refTable}</span> ({cols(f.refColumns)})
                  {f.onDelete ? ` ON DELETE ${f.onDelete}` : ""}
                  {f.onUpdate ? ` ON UPDATE ${f.onUpdate}` : ""}
                </li>
              ))}
              {(d.checks ?? []).map((c) => (
                <li key={`c-${c.name}`}>
                  <strong>{t("Check")}</strong> <span class="mono">{c.name}</span> <code>{c.expr}</code>
                </li>
              ))}
            </ul>
          </Card>
        </>
      )}
    </>
  );
}

function ViewDetail({ view }: { view?: View }) {
  if (!view) return null;
  return (
    <Card title={<h2 class="mono">{view.name}</h2>}>
      {view.comment && <p>{view.comment}</p>}
      {view.columns && (
        <p>
          {t("Columns")}: <span class="mono">{view.columns.join(", ")}</span>
        </p>
      )}
      <pre class="sql">{view.definition}</pre>
    </Card>
  );
}

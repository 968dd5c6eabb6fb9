// Events: the bus's transports and routes, the stream consumer groups (pending, lag), and the
// outbox — counts per status, rows with filters, a row's detail with Replay and Discard for a
// dead letter, showing what the replay did.
import { useState } from "preact/hooks";
import { call } from "../api";
import type { EventOverview as Overview, ReplayView as Replay } from "../api/ops.gen";
import { at, t, tk, useLang } from "../i18n";
import { P } from "../perms";
import { can } from "../session";
import { Card, Dialog, EmptyRow, ErrorBox, ListStatus, Loading, Notice, PagedTable, StatusFilter, Table, useAction, useAsync } from "../ui";


const STATUSES = [tk("pending"), tk("processing"), tk("completed"), tk("failed"), tk("dead")];
const SIZE = 15;

/** at renders an RFC 3339 time in the browser's zone. */

const badge = (status: string) => (status === "completed" ? "badge ok" : status === "dead" || status === "failed" ? "badge bad" : "badge");

export function Events() {
  useLang();
  const [tab, setTab] = useState<"outbox" | "bus">("outbox");
  const overview = useAsync(() => call("sys/event/get_overview"), []);
  return (
    <div class="page">
      <h1>{t("Events")}</h1>
      <div class="tabs" role="tablist">
        <button type="button" role="tab" aria-selected={tab === "outbox"} onClick={() => setTab("outbox")}>
          {t("Outbox")}
        </button>
        <button type="button" role="tab" aria-selected={tab === "bus"} onClick={() => setTab("bus")}>
          {t("Transports and streams")}
        </button>
      </div>
      <ListStatus list={overview} />
      {overview.data && (tab === "bus" ? <Bus o={overview.data} /> : <Outbox o={overview.data} onChange={overview.reload} />)}
    </div>
  );
}

function Bus({ o }: { o: Overview }) {
  const streams = useAsync(() => call("sys/event/get_streams"), []);
  return (
    <>
      <Card title={t("Transports")}>
        <Table headings={[t("Transport"), t("State"), t("Guarantees"), t("Settings")]}>
          {o.transports.map((tr) => (
            <tr key={tr.name} data-transport={tr.name}>
              <td class="mono">{tr.name}</td>
              <td>
                <span class={tr.enabled ? "badge ok" : "badge"}>{tr.enabled ? t("enabled") : t("off")}</span>
                {tr.name === o.defaultTransport && <span class="badge">{t("default")}</span>}
              </td>
              <td>
                {[tr.transactional && t("transactional"), tr.atLeastOnce && t("at least once"), tr.publishOnly && t("publish only")]
                  .filter(Boolean)
                  .map((g) => (
                    <span key={g as string} class="badge">
                      {g}
                    </span>
                  ))}
                {!tr.transactional && !tr.atLeastOnce && !tr.publishOnly && "–"}
              </td>
              <td class="mono settings">
                {tr.settings.map((s) => (
                  <span key={s.key}>
                    {s.key} = {s.value || '""'}
                  </span>
                ))}
              </td>
            </tr>
          ))}
        </Table>
      </Card>
      <Card title={t("Routes")}>
        <p class="muted">{t("Rules are matched top to bottom; the first match wins. Other events go to {name}.", { name: o.defaultTransport })}</p>
        <Table headings={[t("Pattern"), t("Transports")]}>
          {o.routes.map((r) => (
            <tr key={r.pattern}>
              <td class="mono">{r.pattern}</td>
              <td class="mono">{r.transports.join(" → ")}</td>
            </tr>
          ))}
          {!o.routes.length && <EmptyRow cols={2} text={t("No routing rules.")} />}
        </Table>
      </Card>
      <Card title={t("Stream consumer groups")} actions={<button type="button" onClick={streams.reload}>{t("Refresh")}</button>}>
        <ListStatus list={streams} />
        {streams.data && !streams.data.enabled && <p class="muted">{t("The stream transport (kvstore_stream) is off.")}</p>}
        {streams.data?.enabled && (
          <Table headings={[t("Stream"), t("Length"), t("Group"), t("Consumers"), t("Pending"), t("Lag"), t("Last delivered")]}>
            {streams.data.streams.flatMap((s) =>
              (s.groups.length ? s.groups : [null]).map((g) => (
                <tr key={`${s.stream}/${g?.name ?? ""}`} data-stream={s.stream}>
                  <td class="mono">{s.stream}</td>
                  <td>{s.length}</td>
                  <td class="mono">{g ? g.name : t("no group")}</td>
                  <td>{g ? g.consumers : "–"}</td>
                  <td>{g ? g.pending : "–"}</td>
                  <td>{g ? g.lag : "–"}</td>
                  <td class="mono">{g?.lastDeliveredId || "–"}</td>
                </tr>
              )),
            )}
            {!streams.data.streams.length && <EmptyRow cols={7} text={t("No streams.")} />}
          </Table>
        )}
      </Card>
    </>
  );
}

function Outbox({ o, onChange }: { o: Overview; onChange: () => void }) {
  const [status, setStatus] = useState("");
  const [type, setType] = useState("");
  const [eventId, setEventId] = useState("");
  const [filter, setFilter] = useState({ status: "", eventType: "", eventId: "" });
  const [page, setPage] = useState(1);
  const [detail, setDetail] = useState<string | null>(null);
  const list = useAsync(() => {
    const p: Record<string, string> = {};
    for (const [k, v] of Object.entries(filter)) if (v) p[k] = v;
    return call("sys/event/outbox/find_page", p, { meta: { page, size: SIZE } });
  }, [filter, page]);
  if (!o.outbox.enabled) {
    return (
      <Card title={t("Outbox")}>
        <p class="muted">{t("The outbox transport is off.")}</p>
      </Card>
    );
  }
  const show = (s: string) => {
    setStatus(s);
    setPage(1);
    setFilter({ ...filter, status: s });
  };
  return (
    <>
      <Card
        title={t("Outbox")}
        actions={
          <button
            type="button"
            onClick={() => {
              onChange();
              list.reload();
            }}
          >
            {t("Refresh")}
          </button>
        }
      >
        <p class="muted">
          {t("Relayed to {sink}; a row is dead after {n} failed attempts.", { sink: o.outbox.sink, n: o.outbox.maxRetries })}
        </p>
        <div class="counts" role="group" aria-label={t("Rows per status")}>
          {STATUSES.map((s) => (
            <button key={s} type="button" class={`count ${s}`} aria-pressed={filter.status === s} onClick={() => show(filter.status === s ? "" : s)}>
              <strong>{o.outbox.counts[s] ?? 0}</strong> {t(s)}
            </button>
          ))}
        </div>
      </Card>
      <Card
        title={
          <form
            class="search"
            role="search"
            onSubmit={(e) => {
              e.preventDefault();
              setPage(1);
              setFilter({ status, eventType: type.trim(), eventId: eventId.trim() });
            }}
          >
            <StatusFilter statuses={STATUSES} value={status} onChange={setStatus} />
            <label>
              <span class="sr-only">{t("Event type")}</span>
              <input type="search" placeholder={t("Event type (prefix)")} value={type} onInput={(e) => setType(e.currentTarget.value)} />
            </label>
            <label>
              <span class="sr-only">{t("Event id")}</span>
              <input type="search" placeholder={t("Event id")} value={eventId} onInput={(e) => setEventId(e.currentTarget.value)} />
            </label>
            <button type="submit">{t("Filter")}</button>
          </form>
        }
      >
        <PagedTable
          list={list}
          page={page}
          size={SIZE}
          onPage={setPage}
          headings={[t("Written"), t("Event type"), t("Status"), t("Attempts"), t("Last error")]}
          actions
          empty={t("No outbox rows match.")}
          row={(r) => (
            <tr key={r.id} data-row={r.id} data-event={r.eventId}>
              <td>{at(r.createdAt)}</td>
              <td class="mono">{r.eventType}</td>
              <td>
                <span class={badge(r.status)}>{t(r.status)}</span>
              </td>
              <td>{r.retryCount}</td>
              <td class="clip" title={r.lastError}>
                {r.lastError || "–"}
              </td>
              <td>
                <button type="button" onClick={() => setDetail(r.id)}>
                  {t("Details")}
                </button>
              </td>
            </tr>
          )}
        />
      </Card>
      {detail && (
        <RowDetail
          id={detail}
          onClose={() => setDetail(null)}
          onChange={() => {
            onChange();
            list.reload();
          }}
        />
      )}
    </>
  );
}

const OUTCOMES: Record<string, string> = {
  delivered: tk("Delivered: the sink accepted the event and the row is completed."),
  failed: tk("The delivery failed again; the row is {status}."),
  not_dead: tk("Nothing replayed: the row was no longer dead (it is {status})."),
};

function RowDetail({ id, onClose, onChange }: { id: string; onClose: () => void; onChange: () => void }) {
  const row = useAsync(() => call("sys/event/outbox/get", { id }), [id]);
  const act = useAction();
  const [result, setResult] = useState<Replay | null>(null);
  const r = row.data;
  const manage = can(P.eventManage);
  const replay = () =>
    act.run(async () => {
      setResult(await call("sys/event/outbox/replay", { id }));
      row.reload();
      onChange();
    });
  const discard = () => {
    if (!window.confirm(t("Discard this dead letter? The row is deleted and the event is not delivered."))) return;
    void act.run(async () => {
      const d = await call("sys/event/outbox/discard", { id });
      onChange();
      if (d.discarded) onClose();
      else row.reload();
    });
  };
  return (
    <Dialog title={t("Outbox row")} onClose={onClose} wide>
      <ErrorBox error={row.error ?? act.error} />
      <Loading when={row.loading && !r} />
      {result && (
        <p class={result.outcome === "delivered" ? "notice" : "error"} role="status" data-outcome={result.outcome}>
          {t(OUTCOMES[result.outcome] ?? result.outcome, { status: t(result.row.status) })}
          {result.outcome === "failed" && result.row.lastError ? ` ${result.row.lastError}` : ""}
        </p>
      )}
      {r && (
        <>
          <dl class="meta">
            <dt>{t("Status")}</dt>
            <dd>
              <span class={badge(r.status)} data-status={r.status}>
                {t(r.status)}
              </span>
            </dd>
            <dt>{t("Event type")}</dt>
            <dd class="mono">{r.eventType}</dd>
            <dt>{t("Event id")}</dt>
            <dd class="mono">{r.eventId}</dd>
            <dt>{t("Source")}</dt>
            <dd class="mono">{r.source || "–"}</dd>
            <dt>{t("Occurred")}</dt>
            <dd>{at(r.occurredAt)}</dd>
            <dt>{t("Written")}</dt>
            <dd>{at(r.createdAt)}</dd>
            <dt>{t("Processed")}</dt>
            <dd>{at(r.processedAt)}</dd>
            <dt>{t("Attempts")}</dt>
            <dd>{r.retryCount}</dd>
            {r.retryAfter && (
              <>
                <dt>{t(r.status === "processing" ? tk("Leased until") : tk("Next attempt"))}</dt>
                <dd>{at(r.retryAfter)}</dd>
              </>
            )}
            {r.correlationId && (
              <>
                <dt>{t("Correlation id")}</dt>
                <dd class="mono">{r.correlationId}</dd>
              </>
            )}
            {r.traceId && (
              <>
                <dt>{t("Trace id")}</dt>
                <dd class="mono">{r.traceId}</dd>
              </>
            )}
            {r.lastError && (
              <>
                <dt>{t("Last error")}</dt>
                <dd>
                  <pre class="err-text">{r.lastError}</pre>
                </dd>
              </>
            )}
            {r.headers && Object.keys(r.headers).length > 0 && (
              <>
                <dt>{t("Headers")}</dt>
                <dd>
                  <pre class="sql">{JSON.stringify(r.headers, null, 2)}</pre>
                </dd>
              </>
            )}
            <dt>{t("Payload")}</dt>
            <dd>
              <pre class="sql">{JSON.stringify(r.payload, null, 2)}</pre>
            </dd>
          </dl>
          {manage && r.status === "dead" && (
            <div class="actions">
              <button type="button" class="primary" disabled={act.busy} onClick={() => void replay()}>
                {t("Replay")}
              </button>
              <button type="button" class="danger" disabled={act.busy} onClick={discard}>
                {t("Discard")}
              </button>
            </div>
          )}
          {!manage && r.status === "dead" && <Notice text={t("Replaying a dead letter needs {token}.", { token: P.eventManage })} />}
        </>
      )}
    </Dialog>
  );
}

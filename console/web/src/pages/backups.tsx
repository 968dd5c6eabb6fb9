// Backups (sys/backup, issue #47): the archives with their state, a new backup, download through
// a short-lived link, delete, and a restore check that verifies an archive and shows the steps
// to restore it (svc restore, with the server stopped).
import { useState } from "preact/hooks";
import { call } from "../api";
import type { Backup, RestorePlan } from "../api/ops.gen";
import { bytes, t, tk, useLang, when } from "../i18n";
import { P } from "../perms";
import { can } from "../session";
import { Card, Dialog, ErrorBox, PagedTable, useAction, useAsync } from "../ui";

const SIZE = 15;

export function Backups() {
  useLang();
  const [page, setPage] = useState(1);
  const [plan, setPlan] = useState<{ b: Backup; plan?: RestorePlan; error?: unknown } | null>(null);
  const act = useAction();
  const info = useAsync(() => call("sys/backup/info"), []);
  const list = useAsync(() => call("sys/backup/find_page", {}, { meta: { page, size: SIZE } }), [page]);
  const running = list.data?.items.some((b) => b.status === "running");

  const create = () =>
    act.run(async () => {
      await call("sys/backup/create");
      list.reload();
    }, t("The backup has started; refresh to see when it is done."));
  const download = (b: Backup) =>
    act.run(async () => {
      const d = await call("sys/backup/download", { id: b.id });
      const a = document.createElement("a");
      a.href = d.url;
      a.download = d.name;
      document.body.append(a);
      a.click();
      a.remove();
    });
  const remove = (b: Backup) =>
    act.run(async () => {
      await call("sys/backup/delete", { id: b.id });
      list.reload();
    }, t("{name} is deleted.", { name: b.name }));
  const check = async (b: Backup) => {
    setPlan({ b });
    try {
      setPlan({ b, plan: await call("sys/backup/restore", { id: b.id }) });
    } catch (e) {
      setPlan({ b, error: e });
    }
  };

  return (
    <div class="page">
      <h1>{t("Backups")}</h1>
      <Card
        title={t("Where backups go")}
        actions={
          can(P.backupCreate) && (
            <button type="button" class="primary" disabled={act.busy || running} onClick={() => void create()}>
              {t("Back up now")}
            </button>
          )
        }
      >
        <ErrorBox error={info.error} />
        {info.data && (
          <>
            <dl class="meta">
              <dt>{t("Destination")}</dt>
              <dd class="mono">
                {info.data.destination}: {info.data.location}
              </dd>
              <dt>{t("Database")}</dt>
              <dd>
                {info.data.database} — {info.data.databaseIncluded ? t("snapshotted into every archive") : t("not included: use its own tools")}
              </dd>
              <dt>{t("Encryption")}</dt>
              <dd>{info.data.encrypted ? t("AES-256-GCM (svc.backup.encryption_key)") : t("off")}</dd>
            </dl>
            {info.data.advice && <pre class="advice">{info.data.advice}</pre>}
            <p class="muted">
              {t("Scheduled backups and their retention are the schedule {name} on the Cron page (created paused).", {
                name: info.data.schedule,
              })}
            </p>
          </>
        )}
      </Card>
      <Card title={t("Archives")}>
        <PagedTable
          list={list}
          act={act}
          page={page}
          size={SIZE}
          onPage={setPage}
          headings={[t("Started"), t("State"), t("Size"), t("Files"), t("Trigger"), t("Name")]}
          actions
          empty={t("No backups yet.")}
          row={(b) => (
            <tr key={b.id} data-id={b.id}>
              <td>{when(b.startedAtUnixMs)}</td>
              <td title={b.error}>{t(b.status)}</td>
              <td>{b.status === "succeeded" ? bytes(b.size) : "–"}</td>
              <td>{b.status === "succeeded" ? b.fileCount : "–"}</td>
              <td>{t(b.trigger)}</td>
              <td class="mono">{b.name}</td>
              <td class="row-actions">
                {b.status === "succeeded" && can(P.backupDownload) && (
                  <button type="button" onClick={() => void download(b)}>
                    {t("Download")}
                  </button>
                )}
                {b.status === "succeeded" && can(P.backupRestore) && (
                  <button type="button" onClick={() => void check(b)}>
                    {t("Restore…")}
                  </button>
                )}
                {b.status !== "running" && can(P.backupDelete) && (
                  <button type="button" class="danger" disabled={act.busy} onClick={() => void remove(b)}>
                    {t("Delete")}
                  </button>
                )}
              </td>
            </tr>
          )}
        />
      </Card>
      {plan && (
        <Dialog title={t("Restore {name}", { name: plan.b.name })} onClose={() => setPlan(null)} wide>
          {!plan.plan && !plan.error && <p>{t("Verifying every checksum of the archive…")}</p>}
          <ErrorBox error={plan.error} />
          {plan.error != null && <p>{t("This archive cannot be restored. The current data was not touched.")}</p>}
          {plan.plan && (
            <>
              <p class="notice">
                {t("Verified: {entries} entries, {size}, taken {at} by svc {version}.", {
                  entries: plan.plan.entries,
                  size: bytes(plan.plan.totalBytes),
                  at: when(plan.plan.snapshotAtUnixMs),
                  version: plan.plan.svcVersion,
                })}
              </p>
              <p>{t("The server does not replace its own data while it runs. On the server's machine:")}</p>
              <ol class="steps">
                {plan.plan.steps.map((s) => (
                  <li key={s} class={s.startsWith("svc ") ? "mono" : ""}>
                    {s}
                  </li>
                ))}
              </ol>
            </>
          )}
        </Dialog>
      )}
    </div>
  );
}

// Trigger names shown in the list.
tk("manual");
tk("schedule");
tk("cli");

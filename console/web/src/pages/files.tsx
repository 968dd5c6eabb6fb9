// Files: resumable uploads with a real progress bar (pause, resume, resume after a reload),
// the stored files (sys/storage/file find_page) with search, metadata, download and delete.
import { useRef, useState } from "preact/hooks";
import { call, downloadFile } from "../api";
import type { FileView } from "../api/ops.gen";
import { bytes, t, useLang } from "../i18n";
import { P } from "../perms";
import { can, useUser } from "../session";
import { abort, begin, forget, matches, saved, send, type Claim, type Completed } from "../upload";
import { Card, Dialog, ErrorBox, PagedTable, message, useAction, useAsync } from "../ui";


interface Job {
  claim: Claim;
  file: File | null;
  held: number;
  state: "running" | "paused" | "done" | "failed" | "waiting-file";
  error?: string;
  ctl?: AbortController;
  result?: Completed;
}

const SIZE = 15;

export function Files() {
  useLang();
  const me = useUser();
  const mayList = can(P.fileQuery);
  const [jobs, setJobs] = useState<Job[]>(() => saved().map((c) => ({ claim: c, file: null, held: 0, state: "waiting-file" })));
  const [isPublic, setPublic] = useState(false);
  const [keyword, setKeyword] = useState("");
  const [query, setQuery] = useState("");
  const [page, setPage] = useState(1);
  const [detail, setDetail] = useState<FileView | null>(null);
  const [uploadError, setUploadError] = useState<unknown>(null);
  const input = useRef<HTMLInputElement>(null);
  const act = useAction();
  const list = useAsync(
    () =>
      mayList
        ? call("sys/storage/file/find_page", query ? { keyword: query } : {}, { meta: { page, size: SIZE } })
        : Promise.resolve(null),
    [query, page, mayList],
  );

  const update = (claimId: string, patch: Partial<Job>) =>
    setJobs((js) => js.map((j) => (j.claim.claimId === claimId ? { ...j, ...patch } : j)));

  const run = (claim: Claim, file: File) => {
    const ctl = new AbortController();
    update(claim.claimId, { file, state: "running", ctl, error: undefined });
    send(claim, file, (held) => update(claim.claimId, { held }), ctl.signal).then(
      (result) => {
        update(claim.claimId, { state: "done", held: claim.size, result });
        list.reload();
      },
      (e: unknown) => {
        if (e instanceof DOMException && e.name === "AbortError") update(claim.claimId, { state: "paused" });
        else update(claim.claimId, { state: "failed", error: message(e) });
      },
    );
  };

  const choose = async (files: FileList | null) => {
    setUploadError(null);
    for (const f of Array.from(files ?? [])) {
      // A file chosen again after a reload resumes its saved claim.
      const waiting = jobs.find((j) => j.state === "waiting-file" && matches(j.claim, f));
      if (waiting) {
        run(waiting.claim, f);
        continue;
      }
      try {
        const claim = await begin(f, isPublic);
        setJobs((js) => [...js, { claim, file: f, held: 0, state: "running" }]);
        run(claim, f);
      } catch (e) {
        setUploadError(e);
      }
    }
    if (input.current) input.current.value = "";
  };

  const remove = (f: FileView) =>
    act.run(async () => {
      await call("sys/storage/file/delete", { key: f.key });
      list.reload();
    }, t("{name} is queued for deletion.", { name: f.originalFilename }));
  const mayRead = (f: FileView) => f.status !== "deleted" && (f.public || f.key.startsWith("pub/") || f.uploadedBy === me?.id || can(P.fileRead));

  return (
    <div class="page">
      <h1>{t("Files")}</h1>
      <Card title={t("Upload")}>
        <div class="upload-bar">
          <label class="file-pick">
            <span>{t("Choose files to upload")}</span>
            <input ref={input} type="file" multiple name="upload" onChange={(e) => void choose(e.currentTarget.files)} />
          </label>
          <label class="check">
            <input type="checkbox" checked={isPublic} onChange={(e) => setPublic(e.currentTarget.checked)} />
            <span>{t("Public (readable without signing in)")}</span>
          </label>
        </div>
        <ErrorBox error={uploadError} />
        {jobs.length > 0 && (
          <ul class="uploads">
            {jobs.map((j) => {
              const percent = j.claim.size ? Math.floor((j.held / j.claim.size) * 100) : 100;
              return (
                <li key={j.claim.claimId} data-claim={j.claim.claimId}>
                  <div class="upload-head">
                    <span class="name">{j.claim.filename}</span>
                    <span class="muted">
                      {bytes(j.held)} / {bytes(j.claim.size)} · {percent} %
                    </span>
                  </div>
                  <progress max={j.claim.size} value={j.held} aria-label={t("Upload of {name}", { name: j.claim.filename })}>
                    {percent} %
                  </progress>
                  <div class="upload-state">
                    <span class={`state ${j.state}`}>{stateText(j)}</span>
                    {j.state === "running" && (
                      <button type="button" onClick={() => j.ctl?.abort()}>
                        {t("Pause")}
                      </button>
                    )}
                    {(j.state === "paused" || j.state === "failed") && j.file && (
                      <button type="button" onClick={() => run(j.claim, j.file!)}>
                        {t("Resume")}
                      </button>
                    )}
                    {j.state !== "done" && j.state !== "running" && (
                      <button
                        type="button"
                        onClick={() => {
                          void abort(j.claim);
                          setJobs((js) => js.filter((x) => x !== j));
                        }}
                      >
                        {t("Cancel")}
                      </button>
                    )}
                    {j.state === "done" && (
                      <button
                        type="button"
                        onClick={() => {
                          forget(j.claim.claimId);
                          setJobs((js) => js.filter((x) => x !== j));
                        }}
                      >
                        {t("Dismiss")}
                      </button>
                    )}
                  </div>
                  {j.error && (
                    <p class="error" role="alert">
                      {j.error}
                    </p>
                  )}
                </li>
              );
            })}
          </ul>
        )}
      </Card>
      {mayList && (
        <Card
          title={
            <form
              class="search"
              role="search"
              onSubmit={(e) => {
                e.preventDefault();
                setPage(1);
                setQuery(keyword.trim());
              }}
            >
              <label>
                <span class="sr-only">{t("Search files")}</span>
                <input type="search" placeholder={t("Search by file name or key")} value={keyword} onInput={(e) => setKeyword(e.currentTarget.value)} />
              </label>
              <button type="submit">{t("Search")}</button>
            </form>
          }
        >
          <PagedTable
            list={list}
            act={act}
            page={page}
            size={SIZE}
            onPage={setPage}
            headings={[t("Name"), t("Size"), t("Type"), t("State"), t("Uploaded")]}
            actions
            empty={t("No files match.")}
            row={(f) => (
              <tr key={f.key} data-key={f.key}>
                <td>{f.originalFilename}</td>
                <td>{bytes(f.size)}</td>
                <td class="mono">{f.contentType}</td>
                <td>{t(f.status)}</td>
                <td>{f.uploadedAt}</td>
                <td class="row-actions">
                  <button type="button" onClick={() => setDetail(f)}>
                    {t("Details")}
                  </button>
                  {mayRead(f) && (
                    <button type="button" onClick={() => act.run(() => downloadFile(f.key, f.originalFilename))}>
                      {t("Download")}
                    </button>
                  )}
                  {can(P.fileDelete) && f.status !== "deleted" && (
                    <button type="button" class="danger" disabled={act.busy} onClick={() => void remove(f)}>
                      {t("Delete")}
                    </button>
                  )}
                </td>
              </tr>
            )}
          />
        </Card>
      )}
      {detail && (
        <Dialog title={detail.originalFilename} onClose={() => setDetail(null)}>
          <dl class="meta">
            {(
              [
                ["Key", detail.key],
                ["Size", `${bytes(detail.size)} (${detail.size} B)`],
                ["Type", detail.contentType],
                ["Public", detail.public ? t("yes") : t("no")],
                ["State", t(detail.status)],
                ["Uploaded", detail.uploadedAt],
                ["Uploaded by", detail.uploadedBy],
                ["Claimed", detail.claimedAt ?? "–"],
                ["Deleted", detail.deletedAt ? `${detail.deletedAt} (${detail.deleteReason ?? ""})` : "–"],
              ] as const
            ).flatMap(([k, v]) => [
              <dt key={`${k}-t`}>{t(k)}</dt>,
              <dd key={`${k}-d`} class={k === "Key" || k === "Uploaded by" ? "mono" : ""}>
                {v}
              </dd>,
            ])}
          </dl>
        </Dialog>
      )}
    </div>
  );
}

function stateText(j: Job): string {
  switch (j.state) {
    case "running":
      return t("Uploading…");
    case "paused":
      return t("Paused");
    case "done":
      return t("Uploaded");
    case "failed":
      return t("Failed");
    default:
      return t("Choose this file again to resume the upload.");
  }
}

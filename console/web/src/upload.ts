// The resumable upload lifecycle of sys/storage: init_upload → upload_part (multipart, one
// part at a time, with byte progress) → complete_upload. The claim is kept in localStorage,
// so an upload survives pause, a lost connection and a page reload: on resume list_parts
// tells which parts the server holds and only the missing ones are sent.
import { ApiError, call, uploadMultipart, type Result } from "./api";

/** Completed is the stored file complete_upload answers. */
export type Completed = Result<"sys/storage/complete_upload">;

export interface Claim {
  claimId: string;
  key: string;
  filename: string;
  size: number;
  lastModified: number;
  partSize: number;
  partCount: number;
  expiresAt: string;
}



const STORE_KEY = "svc.console.uploads";

/** saved answers the claims of unfinished uploads, dropping expired ones. */
export function saved(): Claim[] {
  try {
    const all = JSON.parse(localStorage.getItem(STORE_KEY) ?? "[]") as Claim[];
    return all.filter((c) => Date.parse(c.expiresAt) > Date.now());
  } catch {
    return [];
  }
}

function store(list: Claim[]) {
  if (list.length) localStorage.setItem(STORE_KEY, JSON.stringify(list));
  else localStorage.removeItem(STORE_KEY);
}

export function forget(claimId: string): void {
  store(saved().filter((c) => c.claimId !== claimId));
}

function remember(c: Claim) {
  store([...saved().filter((x) => x.claimId !== c.claimId), c]);
}

/** matches tells whether file is the one a saved claim was started for. */
export function matches(c: Claim, f: File): boolean {
  return c.filename === f.name && c.size === f.size && c.lastModified === f.lastModified;
}

/** begin starts a new upload of file and remembers its claim. */
export async function begin(file: File, isPublic = false): Promise<Claim> {
  const r = await call("sys/storage/init_upload", {
    filename: file.name,
    size: file.size,
    contentType: file.type || "application/octet-stream",
    public: isPublic,
  });
  const c: Claim = {
    claimId: r.claimId,
    key: r.key,
    filename: file.name,
    size: file.size,
    lastModified: file.lastModified,
    partSize: r.partSize,
    partCount: r.partCount,
    expiresAt: r.expiresAt,
  };
  remember(c);
  return c;
}

/**
 * send uploads the parts the server does not hold yet, reporting bytes held, then completes.
 * An abort (pause) rejects with an AbortError and keeps the claim for a later resume.
 */
export async function send(c: Claim, file: File, onProgress: (held: number) => void, signal: AbortSignal): Promise<Completed> {
  const { parts } = await call("sys/storage/list_parts", { claimId: c.claimId }, { signal });
  const held = new Map(parts.map((p) => [p.partNumber, p.size]));
  const partLen = (n: number) => Math.min(c.partSize, c.size - (n - 1) * c.partSize);
  let done = 0;
  for (const [n, size] of held) if (size === partLen(n)) done += size;
  onProgress(done);
  for (let n = 1; n <= c.partCount; n++) {
    if (held.get(n) === partLen(n)) continue;
    if (signal.aborted) throw new DOMException("paused", "AbortError");
    const start = (n - 1) * c.partSize;
    const blob = file.slice(start, start + partLen(n));
    await uploadMultipart("sys/storage/upload_part", { claimId: c.claimId, partNumber: n }, blob, (sent) => onProgress(done + sent), signal);
    done += blob.size;
    onProgress(done);
  }
  const info = await call("sys/storage/complete_upload", { claimId: c.claimId }, { signal });
  forget(c.claimId);
  return info;
}

/** abort gives the claim up on the server and forgets it. */
export async function abort(c: Claim): Promise<void> {
  try {
    await call("sys/storage/abort_upload", { claimId: c.claimId });
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
  }
  forget(c.claimId);
}

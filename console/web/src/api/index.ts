// The console's only way to the server: the public /api envelope (wire-core §1–§2) with the
// signed-in user's bearer token. An expired access token (401/1002) is exchanged once for a new
// pair with the refresh token and the call is retried; any other 401 signs the user out.

import { getLang } from "../i18n";
import type { AuthTokens, Input, OpName, Ops } from "./ops.gen";

export type { Input, OpName, Ops } from "./ops.gen";

export interface Envelope<T> {
  code: number;
  message: string;
  data: T;
}

/** ApiError is a non-zero envelope code, with the server's own (localized) message. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly status: number,
    readonly data: unknown = null,
    /** retryAfter is the server's Retry-After in seconds (a rate limit, a lockout), else null. */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** Tokens are the pair login, resolve_challenge and refresh answer. */
export type Tokens = AuthTokens;

const TOKENS_KEY = "svc.console.tokens";
const API = resolveAPI();

function resolveAPI(): string {
  // The console lives at <origin><path>/; /api is at the origin's root.
  return new URL("/api", window.location.origin).toString();
}

let tokens: Tokens | null = loadTokens();
let refreshing: Promise<boolean> | null = null;
const listeners = new Set<(t: Tokens | null) => void>();

function loadTokens(): Tokens | null {
  try {
    const raw = localStorage.getItem(TOKENS_KEY);
    return raw ? (JSON.parse(raw) as Tokens) : null;
  } catch {
    return null;
  }
}

export function getTokens(): Tokens | null {
  return tokens;
}

/** setTokens stores (or clears) the token pair and tells the listeners. */
export function setTokens(t: Tokens | null): void {
  tokens = t;
  if (t) localStorage.setItem(TOKENS_KEY, JSON.stringify(t));
  else localStorage.removeItem(TOKENS_KEY);
  listeners.forEach((l) => l(t));
}

export function onTokens(l: (t: Tokens | null) => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** Codes after which the session is over (not expired: gone). */
const SIGNED_OUT_CODES = new Set([1000, 1003, 1004, 1005, 1006, 1007]);
const TOKEN_EXPIRED = 1002;

/** envelope reads a response body as the /api envelope, else fails with 1900 (wire-core §2). */
async function envelope<T>(res: Response): Promise<Envelope<T>> {
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(1900, `HTTP ${res.status}`, res.status);
  }
  const env = body as Envelope<T>;
  if (typeof env !== "object" || env === null || typeof env.code !== "number" || !("data" in env)) {
    throw new ApiError(1900, `HTTP ${res.status}`, res.status);
  }
  return env;
}

/** Page is one page of a find_page answer (wire-core §9). */
export interface Page<T> {
  page: number;
  size: number;
  total: number;
  items: T[];
}

export interface CallOptions {
  meta?: Record<string, unknown>;
  /** anonymous skips the bearer token (login, refresh, resolve_challenge). */
  anonymous?: boolean;
  signal?: AbortSignal;
}

/** Answer is what one attempt of a request got: an envelope (code 0 carries the value), the
 * HTTP status and the Retry-After header. */
export interface Answer<T> {
  env: Envelope<T>;
  status: number;
  retryAfter: string | null;
}

/**
 * request is the one place of the session rule, for every way the console reaches the server
 * (fetch, the XHR of an upload, a download): attempt runs with the current bearer token (none
 * when anonymous); an expired token (1002) is exchanged once with the refresh token and the
 * attempt retried; an expired token that cannot be refreshed, or a code that says the session is
 * gone, signs the user out. Any non-zero code becomes an ApiError.
 */
export async function request<T>(attempt: (bearer: string | null) => Promise<Answer<T>>, anonymous = false): Promise<T> {
  const bearer = () => (!anonymous && tokens ? tokens.accessToken : null);
  let a = await attempt(bearer());
  if (!anonymous && a.env.code === TOKEN_EXPIRED && (await refresh())) a = await attempt(bearer());
  const { env } = a;
  if (env.code === 0) return env.data;
  if (!anonymous && (SIGNED_OUT_CODES.has(env.code) || env.code === TOKEN_EXPIRED)) setTokens(null);
  throw new ApiError(env.code, env.message, a.status, env.data, retryAfter(a.retryAfter));
}

/** headers are the ones every /api request sends, with the bearer token when there is one. */
function headers(bearer: string | null): Record<string, string> {
  const h: Record<string, string> = { Accept: "application/json", "Accept-Language": getLang() };
  if (bearer) h.Authorization = `Bearer ${bearer}`;
  return h;
}

/** Params and Result are an operation's params (every field optional, see Input) and data. */
export type Params<K extends OpName> = Input<Ops[K]["params"]>;
export type Result<K extends OpName> = Ops[K]["result"];

/**
 * call runs the operation op ("resource/action", typed by ops.gen.ts) and answers its data, or
 * throws ApiError.
 */
export function call<K extends OpName>(op: K, params?: Params<K>, opts: CallOptions = {}): Promise<Result<K>> {
  const [name, version = "v1"] = op.split("@") as [string, string?];
  const cut = name.lastIndexOf("/");
  return invoke(name.slice(0, cut), name.slice(cut + 1), (params ?? {}) as Record<string, unknown>, opts, version) as Promise<Result<K>>;
}

/**
 * invoke runs an operation named at run time (an approval form's data source, for example),
 * whose params and result no type describes.
 */
export function invoke(resource: string, action: string, params: Record<string, unknown> = {}, opts: CallOptions = {}, version = "v1"): Promise<unknown> {
  const body = JSON.stringify({ resource, action, version, params, meta: opts.meta ?? {} });
  return request(async (bearer) => {
    const h = { ...headers(bearer), "Content-Type": "application/json" };
    const res = await fetch(API, { method: "POST", body, headers: h, signal: opts.signal, credentials: "omit" });
    return { env: await envelope<unknown>(res), status: res.status, retryAfter: res.headers.get("Retry-After") };
  }, opts.anonymous);
}

/** retryAfter reads a Retry-After header, delay-seconds or an HTTP date, as seconds from now. */
function retryAfter(v: string | null): number | null {
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** refresh exchanges the refresh token once, however many calls wait for it. */
export function refresh(): Promise<boolean> {
  if (refreshing) return refreshing;
  const rt = tokens?.refreshToken;
  if (!rt) return Promise.resolve(false);
  refreshing = call("security/auth/refresh", { refreshToken: rt }, { anonymous: true })
    .then((t) => {
      setTokens({ accessToken: t.accessToken, refreshToken: t.refreshToken || rt });
      return true;
    })
    .catch(() => false)
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

/** The operations a multipart envelope carries a file to. */
type UploadOp = "sys/storage/upload_part";

/**
 * uploadMultipart sends one multipart operation (upload_part) with progress through
 * XMLHttpRequest, the only browser API that reports request-body progress.
 */
export function uploadMultipart<K extends UploadOp>(
  op: K,
  params: Params<K>,
  file: Blob,
  onProgress: (sent: number) => void,
  signal?: AbortSignal,
): Promise<Result<K>> {
  const cut = op.lastIndexOf("/");
  const attempt = (bearer: string | null): Promise<Answer<Result<K>>> =>
    new Promise((resolve, reject) => {
      const form = new FormData();
      form.append("resource", op.slice(0, cut));
      form.append("action", op.slice(cut + 1));
      form.append("version", "v1");
      form.append("params", JSON.stringify(params));
      form.append("file", file, "part");
      const xhr = new XMLHttpRequest();
      xhr.open("POST", API);
      for (const [k, v] of Object.entries(headers(bearer))) xhr.setRequestHeader(k, v);
      xhr.upload.onprogress = (e) => onProgress(Math.min(e.loaded, file.size));
      xhr.onload = () => {
        try {
          const env = JSON.parse(xhr.responseText) as Envelope<Result<K>>;
          if (typeof env.code !== "number") throw new Error("bad envelope");
          resolve({ env, status: xhr.status, retryAfter: xhr.getResponseHeader("Retry-After") });
        } catch {
          reject(new ApiError(1900, `HTTP ${xhr.status}`, xhr.status));
        }
      };
      xhr.onerror = () => reject(new ApiError(1900, "network error", 0));
      xhr.onabort = () => reject(new DOMException("aborted", "AbortError"));
      if (signal) {
        if (signal.aborted) return xhr.abort();
        signal.addEventListener("abort", () => xhr.abort(), { once: true });
      }
      xhr.send(form);
    });
  return request(attempt);
}

/** download fetches a stored file through the proxy with the bearer token and saves it. A
 * success is the file, whatever its type (a stored .json file too); an error is an envelope. */
export async function downloadFile(key: string, filename: string): Promise<void> {
  const url = new URL(`/storage/files/${key.split("/").map(encodeURIComponent).join("/")}`, window.location.origin);
  const blob = await request<Blob>(async (bearer) => {
    const res = await fetch(url, { headers: bearer ? { Authorization: `Bearer ${bearer}` } : {}, credentials: "omit" });
    const retry = res.headers.get("Retry-After");
    if (res.ok) return { env: { code: 0, message: "", data: await res.blob() }, status: res.status, retryAfter: retry };
    return { env: await envelope<Blob>(res), status: res.status, retryAfter: retry };
  });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

// The console's only way to the server: the public /api envelope (wire-core §1–§2) with the
// signed-in user's bearer token. An expired access token (401/1002) is exchanged once for a new
// pair with the refresh token and the call is retried; any other 401 signs the user out.

import { getLang } from "./i18n";

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

export interface Tokens {
  accessToken: string;
  refreshToken?: string;
}

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

async function parse<T>(res: Response): Promise<Envelope<T>> {
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

/** call runs one operation and answers its data, or throws ApiError. */
export async function call<T>(
  resource: string,
  action: string,
  params: Record<string, unknown> = {},
  opts: CallOptions = {},
): Promise<T> {
  const body = JSON.stringify({ resource, action, version: "v1", params, meta: opts.meta ?? {} });
  return send<T>(() => ({ body, headers: { "Content-Type": "application/json" } }), opts);
}

type Body = { body: BodyInit; headers: Record<string, string> };

async function send<T>(make: () => Body, opts: CallOptions, retried = false): Promise<T> {
  const { body, headers } = make();
  const h: Record<string, string> = { Accept: "application/json", "Accept-Language": getLang(), ...headers };
  if (!opts.anonymous && tokens) h.Authorization = `Bearer ${tokens.accessToken}`;
  const res = await fetch(API, { method: "POST", body, headers: h, signal: opts.signal, credentials: "omit" });
  const env = await parse<T>(res);
  if (env.code === 0) return env.data;
  if (!opts.anonymous && env.code === TOKEN_EXPIRED && !retried && (await refresh())) {
    return send<T>(make, opts, true);
  }
  if (!opts.anonymous && (SIGNED_OUT_CODES.has(env.code) || env.code === TOKEN_EXPIRED)) {
    setTokens(null);
  }
  throw new ApiError(env.code, env.message, res.status, env.data, retryAfter(res.headers.get("Retry-After")));
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
  refreshing = call<Tokens>("security/auth", "refresh", { refreshToken: rt }, { anonymous: true })
    .then((t) => {
      setTokens({ accessToken: t.accessToken, refreshToken: t.refreshToken ?? rt });
      return true;
    })
    .catch(() => false)
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

/**
 * upload sends one multipart operation (upload_part) with progress through XMLHttpRequest,
 * the only browser API that reports request-body progress.
 */
export function uploadMultipart<T>(
  resource: string,
  action: string,
  params: Record<string, unknown>,
  file: Blob,
  onProgress: (sent: number) => void,
  signal?: AbortSignal,
): Promise<T> {
  const attempt = (): Promise<Envelope<T> & { status: number }> =>
    new Promise((resolve, reject) => {
      const form = new FormData();
      form.append("resource", resource);
      form.append("action", action);
      form.append("version", "v1");
      form.append("params", JSON.stringify(params));
      form.append("file", file, "part");
      const xhr = new XMLHttpRequest();
      xhr.open("POST", API);
      xhr.setRequestHeader("Accept", "application/json");
      xhr.setRequestHeader("Accept-Language", getLang());
      if (tokens) xhr.setRequestHeader("Authorization", `Bearer ${tokens.accessToken}`);
      xhr.upload.onprogress = (e) => onProgress(Math.min(e.loaded, file.size));
      xhr.onload = () => {
        try {
          const env = JSON.parse(xhr.responseText) as Envelope<T>;
          if (typeof env.code !== "number") throw new Error("bad envelope");
          resolve({ ...env, status: xhr.status });
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
  return (async () => {
    let env = await attempt();
    if (env.code === TOKEN_EXPIRED && (await refresh())) env = await attempt();
    if (env.code === 0) return env.data;
    if (SIGNED_OUT_CODES.has(env.code) || env.code === TOKEN_EXPIRED) setTokens(null);
    throw new ApiError(env.code, env.message, env.status, env.data);
  })();
}

/** download fetches a stored file through the proxy with the bearer token and saves it. */
export async function downloadFile(key: string, filename: string): Promise<void> {
  const url = new URL(`/storage/files/${key.split("/").map(encodeURIComponent).join("/")}`, window.location.origin);
  const doFetch = () =>
    fetch(url, { headers: tokens ? { Authorization: `Bearer ${tokens.accessToken}` } : {}, credentials: "omit" });
  let res = await doFetch();
  const type = res.headers.get("Content-Type") ?? "";
  if (type.startsWith("application/json")) {
    const env = await parse<unknown>(res.clone());
    if (env.code === TOKEN_EXPIRED && (await refresh())) res = await doFetch();
    else if (env.code !== 0) throw new ApiError(env.code, env.message, res.status);
  }
  if (!res.ok) throw new ApiError(1900, `HTTP ${res.status}`, res.status);
  const blob = await res.blob();
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

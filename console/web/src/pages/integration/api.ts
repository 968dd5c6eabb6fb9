// Types and calls of the integration module's /api resources (docs/integration.md).
import { call } from "../../api";
import { t } from "../../i18n";

export type { Page } from "../../api";

export interface Audited {
  id: string;
  createdAt?: string;
  updatedAt?: string;
}

export interface Contract extends Audited {
  code: string;
  name: string;
  description?: string | null;
  labels?: Record<string, string>;
  inputSchema?: unknown;
  outputSchema?: unknown;
  isEnabled: boolean;
}

export interface AuthConfig {
  scheme: string;
  params?: Record<string, string>;
  script?: string;
}

export interface DataSource {
  kind: string;
  mode?: string;
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  database?: string;
  schema?: string;
  path?: string;
  sslMode?: string;
}

export interface System extends Audited {
  code: string;
  name: string;
  baseUrl: string;
  outboundAuth?: AuthConfig | null;
  outboundEnvelope?: { request?: string; response?: string } | null;
  inboundAuth?: AuthConfig | null;
  dataSource?: DataSource | null;
  params?: Record<string, string> | null;
  timeoutMs: number;
  retry?: { maxAttempts: number; initialBackoffMs?: number; maxBackoffMs?: number } | null;
  isEnabled: boolean;
}

export interface Adapter extends Audited {
  systemId: string;
  contractId: string;
  direction: "outbound" | "inbound";
  script: string;
  timeoutMs: number;
  isEnabled: boolean;
}

export interface Route extends Audited {
  routeKey: string;
  contractId: string;
  systemId: string;
  isEnabled: boolean;
}

export interface CodeMapEntry {
  canonical: unknown;
  external: unknown;
  canonicalAliases?: unknown[];
  externalAliases?: unknown[];
}

export interface CodeMap extends Audited {
  systemId: string;
  codeSet: string;
  name: string;
  entries: CodeMapEntry[] | null;
  onUnmapped: string;
  fallbackCanonical?: unknown;
  fallbackExternal?: unknown;
  isEnabled: boolean;
}

export interface Exchange {
  method: string;
  url: string;
  requestHeaders?: Record<string, string>;
  requestBody?: string;
  status?: number;
  responseHeaders?: Record<string, string>;
  responseBody?: string;
  durationMs: number;
  error?: string;
}

export interface LogRow {
  id: string;
  createdAt: string;
  createdBy: string;
  systemCode: string;
  contractCode: string;
  direction: string;
  failureKind: string;
  durationMs: number;
  input: unknown;
  output: unknown;
  httpTrace: Exchange[] | unknown;
  error: string | null;
  requestId: string;
}

/** The secret mask the server shows for, and keeps on, a stored secret. */
export const MASK = "******";

export const itg = <T,>(resource: string, action: string, params?: Record<string, unknown>, meta?: Record<string, unknown>) =>
  call<T>(`integration/${resource}`, action, params, meta ? { meta } : undefined);

/** all lists every row of a definition resource (find_all, at most 10000). */
export const all = <T,>(resource: string, params: Record<string, unknown> = {}) => itg<T[]>(resource, "find_all", params);

/** pretty renders a JSON value for reading. */
export function pretty(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch {
      return v;
    }
  }
  return JSON.stringify(v, null, 2);
}

/** parseJSON parses optional JSON text: "" is undefined; a syntax error names the field. */
export function parseJSON(text: string, field: string): unknown {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(t("{field} is not valid JSON.", { field }));
  }
}

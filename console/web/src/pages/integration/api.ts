// Types and calls of the integration module's /api resources (docs/integration.md).
import { call, type OpName, type Params, type Result } from "../../api";
import { t } from "../../i18n";

export type { Page } from "../../api";

export type {
  Adapter,
  AuthConfig,
  CodeMap,
  CodeMapEntry,
  Contract,
  DataSourceConfig as DataSource,
  HTTPExchange as Exchange,
  InvocationLog as LogRow,
  Route,
  System,
} from "../../api/ops.gen";

/** The secret mask the server shows for, and keeps on, a stored secret. */
export const MASK = "******";

/** ItgOp is an operation under integration/, named without the prefix ("system/find_page"). */
export type ItgOp = OpName extends infer K ? (K extends `integration/${infer S}` ? S : never) : never;
type Full<K extends ItgOp> = `integration/${K}` & OpName;

/** itg runs an integration operation, with the paging meta of a find_page. */
export const itg = <K extends ItgOp>(op: K, params?: Params<Full<K>>, meta?: Record<string, unknown>): Promise<Result<Full<K>>> =>
  call(`integration/${op}` as Full<K>, params, meta ? { meta } : undefined);

/** DefResource is a definition resource: find_page, find_all, create, update, delete. */
export type DefResource = "system" | "contract" | "adapter" | "route" | "code_map";

/** all lists every row of a definition resource (find_all, at most 10000). */
export const all = <R extends DefResource>(resource: R) => itg(`${resource}/find_all`);

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

// A fake /api for unit tests: fetch answers envelopes from a handler and records each request.
import { vi } from "vitest";

export interface Sent {
  resource: string;
  action: string;
  version: string;
  params: Record<string, unknown>;
  meta: Record<string, unknown>;
  authorization: string | null;
}

/** Reply is what the handler answers: an envelope, with an HTTP status and headers. */
export interface Reply {
  code: number;
  message?: string;
  data?: unknown;
  status?: number;
  headers?: Record<string, string>;
}

/** fakeAPI replaces fetch with handler and answers the requests it has seen. */
export function fakeAPI(handler: (req: Sent) => Reply | Promise<Reply>): Sent[] {
  const seen: Sent[] = [];
  vi.stubGlobal("fetch", async (_url: string, init: RequestInit) => {
    const body = JSON.parse(String(init.body)) as Omit<Sent, "authorization">;
    const h = init.headers as Record<string, string>;
    const req: Sent = { ...body, authorization: h.Authorization ?? null };
    seen.push(req);
    const r = await handler(req);
    return new Response(JSON.stringify({ code: r.code, message: r.message ?? "", data: r.data ?? null }), {
      status: r.status ?? (r.code === 0 ? 200 : 400),
      headers: { "Content-Type": "application/json", ...r.headers },
    });
  });
  return seen;
}

/** signedIn stores a token pair the way api.ts keeps it, before the module is loaded. */
export function signedIn(accessToken = "a1", refreshToken = "r1"): void {
  localStorage.setItem("svc.console.tokens", JSON.stringify({ accessToken, refreshToken }));
}

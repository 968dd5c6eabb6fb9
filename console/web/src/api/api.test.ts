import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fakeAPI, signedIn } from "../test/server";

// api.ts reads the stored tokens when it loads: each test loads a fresh copy.
async function load() {
  vi.resetModules();
  return import("./index");
}

beforeEach(() => vi.unstubAllGlobals());
afterEach(() => vi.unstubAllGlobals());

describe("call", () => {
  it("sends the envelope with the bearer token and answers the data", async () => {
    signedIn("a1");
    const seen = fakeAPI(() => ({ code: 0, data: { id: "u1", username: "ann" } }));
    const api = await load();
    const u = await api.call("security/user/get", { id: "u1" }, { meta: { page: 2 } });
    expect(u.username).toBe("ann");
    expect(seen).toEqual([
      { resource: "security/user", action: "get", version: "v1", params: { id: "u1" }, meta: { page: 2 }, authorization: "Bearer a1" },
    ]);
  });

  it("splits the resource at the last slash and sends {} for no params", async () => {
    const seen = fakeAPI(() => ({ code: 0, data: [] }));
    const api = await load();
    await api.call("sys/storage/file/find_page");
    expect(seen[0]).toMatchObject({ resource: "sys/storage/file", action: "find_page", params: {}, authorization: null });
  });

  it("refreshes an expired token once and retries with the new one", async () => {
    signedIn("old", "r1");
    const seen = fakeAPI((req) => {
      if (req.action === "refresh") return { code: 0, data: { accessToken: "new", refreshToken: "r2" } };
      return req.authorization === "Bearer new" ? { code: 0, data: { ok: true } } : { code: 1002, status: 401, message: "expired" };
    });
    const api = await load();
    await expect(api.invoke("x", "y")).resolves.toEqual({ ok: true });
    expect(seen.map((s) => [s.action, s.authorization, s.params])).toEqual([
      ["y", "Bearer old", {}],
      ["refresh", null, { refreshToken: "r1" }],
      ["y", "Bearer new", {}],
    ]);
    expect(api.getTokens()).toEqual({ accessToken: "new", refreshToken: "r2" });
    expect(JSON.parse(localStorage.getItem("svc.console.tokens")!)).toEqual({ accessToken: "new", refreshToken: "r2" });
  });

  it("refreshes once for every call that finds the token expired at the same time", async () => {
    signedIn("old", "r1");
    const seen = fakeAPI((req) => {
      if (req.action === "refresh") return { code: 0, data: { accessToken: "new" } };
      return req.authorization === "Bearer new" ? { code: 0, data: req.action } : { code: 1002, status: 401 };
    });
    const api = await load();
    await expect(Promise.all([api.invoke("x", "a"), api.invoke("x", "b")])).resolves.toEqual(["a", "b"]);
    expect(seen.filter((s) => s.action === "refresh")).toHaveLength(1);
    // A refresh answer without a new refresh token keeps the old one.
    expect(api.getTokens()).toEqual({ accessToken: "new", refreshToken: "r1" });
  });

  it("signs out when the expired token cannot be refreshed", async () => {
    signedIn("old", "r1");
    fakeAPI((req) => (req.action === "refresh" ? { code: 1004, status: 401 } : { code: 1002, status: 401, message: "expired" }));
    const api = await load();
    const heard: unknown[] = [];
    api.onTokens((t) => heard.push(t));
    await expect(api.invoke("x", "y")).rejects.toMatchObject({ name: "ApiError", code: 1002, status: 401 });
    expect(api.getTokens()).toBeNull();
    expect(heard).toEqual([null]);
    expect(localStorage.getItem("svc.console.tokens")).toBeNull();
  });

  it("does not retry twice when the refreshed token is refused as expired too", async () => {
    signedIn("old", "r1");
    const seen = fakeAPI((req) => (req.action === "refresh" ? { code: 0, data: { accessToken: "new" } } : { code: 1002, status: 401 }));
    const api = await load();
    await expect(api.invoke("x", "y")).rejects.toMatchObject({ code: 1002 });
    expect(seen.map((s) => s.action)).toEqual(["y", "refresh", "y"]);
    expect(api.getTokens()).toBeNull();
  });

  it.each([1000, 1003, 1004, 1005, 1006, 1007])("signs out on code %i without refreshing", async (code) => {
    signedIn();
    const seen = fakeAPI(() => ({ code, status: 401, message: "gone" }));
    const api = await load();
    await expect(api.invoke("x", "y")).rejects.toMatchObject({ code, message: "gone" });
    expect(seen).toHaveLength(1);
    expect(api.getTokens()).toBeNull();
  });

  it("keeps the session on any other error and reads Retry-After", async () => {
    signedIn();
    fakeAPI(() => ({ code: 1401, status: 429, message: "slow down", data: { limit: 5 }, headers: { "Retry-After": "42" } }));
    const api = await load();
    const err = await api.invoke("x", "y").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(api.ApiError);
    expect(err).toMatchObject({ code: 1401, status: 429, retryAfter: 42, data: { limit: 5 } });
    expect(api.getTokens()).not.toBeNull();
  });

  it("sends no token and never signs out for an anonymous call", async () => {
    signedIn("a1");
    const seen = fakeAPI(() => ({ code: 1002, status: 401 }));
    const api = await load();
    await expect(api.invoke("security/auth", "login", {}, { anonymous: true })).rejects.toMatchObject({ code: 1002 });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.authorization).toBeNull();
    expect(api.getTokens()).toEqual({ accessToken: "a1", refreshToken: "r1" });
  });

  it("answers 1900 for a body that is not an envelope", async () => {
    vi.stubGlobal("fetch", async () => new Response("<html>bad gateway</html>", { status: 502 }));
    const api = await load();
    await expect(api.invoke("x", "y")).rejects.toMatchObject({ code: 1900, status: 502, message: "HTTP 502" });
  });
});

describe("request", () => {
  it("gives every transport the same rule: the attempt is retried with the refreshed token", async () => {
    signedIn("old", "r1");
    fakeAPI(() => ({ code: 0, data: { accessToken: "new", refreshToken: "r2" } })); // the refresh
    const api = await load();
    const bearers: (string | null)[] = [];
    const got = await api.request<string>(async (bearer) => {
      bearers.push(bearer);
      return bearer === "new"
        ? { env: { code: 0, message: "", data: "file" }, status: 200, retryAfter: null }
        : { env: { code: 1002, message: "expired", data: null as unknown as string }, status: 401, retryAfter: null };
    });
    expect(got).toBe("file");
    expect(bearers).toEqual(["old", "new"]);
  });
});

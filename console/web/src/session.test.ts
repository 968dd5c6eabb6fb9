import { beforeEach, describe, expect, it, vi } from "vitest";
import { fakeAPI, signedIn } from "./test/server";

async function load() {
  vi.resetModules();
  const session = await import("./session");
  const api = await import("./api");
  return { session, api };
}

beforeEach(() => vi.unstubAllGlobals());

describe("granted", () => {
  it.each([
    [["*"], "sys.cron.query", true],
    [["sys.cron.query"], "sys.cron.query", true],
    [["sys.cron.*"], "sys.cron.query", true],
    [["sys.*"], "sys.cron.query", true],
    [["sys.cron.*"], "sys.cronx", false],
    [["sys.cron"], "sys.cron.query", false],
    [["sys.cron.query"], "sys.cron.manage", false],
    [[], "sys.cron.query", false],
  ] as const)("%j grants %s: %s", async (patterns, perm, want) => {
    const { session } = await load();
    expect(session.granted(patterns, perm)).toBe(want);
  });
});

describe("the signed-in user", () => {
  it("is loaded with get_user_info and answers can()", async () => {
    signedIn();
    const seen = fakeAPI(() => ({ code: 0, data: { id: "u1", name: "Ann", permissionTokens: ["sys.cron.*"], menus: [] } }));
    const { session } = await load();
    expect(session.can("sys.cron.query")).toBe(false); // not loaded yet
    const u = await session.loadUser();
    expect(u?.name).toBe("Ann");
    expect(seen.map((s) => `${s.resource}/${s.action}`)).toEqual(["security/auth/get_user_info"]);
    expect(session.can("sys.cron.query")).toBe(true);
    expect(session.can("security.user.query")).toBe(false);
  });

  it("is null without tokens, and nothing is asked", async () => {
    const seen = fakeAPI(() => ({ code: 0 }));
    const { session } = await load();
    await expect(session.loadUser()).resolves.toBeNull();
    expect(seen).toHaveLength(0);
  });

  it("is forgotten when the tokens go (a refused session)", async () => {
    signedIn();
    fakeAPI(() => ({ code: 0, data: { id: "u1", name: "Ann", permissionTokens: ["*"], menus: [] } }));
    const { session, api } = await load();
    await session.loadUser();
    expect(session.can("anything")).toBe(true);
    api.setTokens(null);
    expect(session.can("anything")).toBe(false);
  });

  it("signs out on the server and forgets the tokens even when logout fails", async () => {
    signedIn("a1");
    const seen = fakeAPI(() => ({ code: 1500, status: 500, message: "down" }));
    const { session, api } = await load();
    await session.signOut();
    expect(seen.map((s) => [s.action, s.authorization])).toEqual([["logout", "Bearer a1"]]);
    expect(api.getTokens()).toBeNull();
  });
});

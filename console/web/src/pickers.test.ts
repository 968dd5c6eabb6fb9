import { beforeEach, describe, expect, it, vi } from "vitest";
import { fakeAPI, signedIn, type Sent } from "./test/server";

// The department tree security/department/find_tree answers: Head office > Finance, Operations.
const TREE = [
  {
    id: "d-hq",
    code: "hq",
    name: "Head office",
    leaderIds: [],
    children: [{ id: "d-fin", code: "fin", name: "Finance", parentId: "d-hq", leaderIds: ["u1"], children: [] }],
  },
  { id: "d-ops", code: "ops", name: "Operations", leaderIds: [], children: [] },
];

/** load signs in a user holding tokens and answers the pickers module with the requests seen. */
async function load(tokens: string[]) {
  vi.resetModules();
  signedIn();
  const seen = fakeAPI((req: Sent) => {
    if (req.action === "get_user_info") return { code: 0, data: { id: "u1", name: "Ann", permissionTokens: tokens, menus: [] } };
    if (req.resource === "security/department" && req.action === "find_tree") return { code: 0, data: TREE };
    return { code: 1200, status: 404, message: "not found" };
  });
  await (await import("./session")).loadUser();
  const pickers = await import("./pickers");
  return { pickers, seen };
}

const signal = new AbortController().signal;

beforeEach(() => vi.unstubAllGlobals());

describe("departmentSource", () => {
  it("searches the tree by name, code or path, once fetched, and names a chosen id", async () => {
    const { pickers, seen } = await load(["security.department.query"]);
    const src = pickers.departmentSource;
    expect(await src.search("FIN", signal)).toEqual([{ id: "d-fin", label: "Finance", hint: "Head office · fin" }]);
    expect((await src.search("ops", signal)).map((o) => o.id)).toEqual(["d-ops"]);
    expect((await src.search("head", signal)).map((o) => o.id)).toEqual(["d-hq", "d-fin"]); // Finance's path
    expect((await src.search("", signal)).map((o) => o.hint)).toEqual(["hq", "Head office · fin", "ops"]);
    expect(await src.label!("d-fin")).toBe("Finance");
    expect(await src.label!("d-gone")).toBeUndefined();
    expect(seen.filter((s) => s.action === "find_tree")).toHaveLength(1);
  });

  it("asks nothing without security.department.query: the picker takes the id typed", async () => {
    const { pickers, seen } = await load(["security.user.query"]);
    expect(await pickers.departmentSource.search("fin", signal)).toEqual([]);
    expect(await pickers.departmentSource.label!("d-fin")).toBeUndefined();
    expect(seen.map((s) => `${s.resource}/${s.action}`)).toEqual(["security/auth/get_user_info"]);
  });
});

// Browser tests of the integration pages: a system and adapters created from the console, the
// system pointing at a small HTTP server started here (it records what it receives); the test
// bench shows the masked wire trace, test_connection reaches the server, and the invocation log
// shows an inbound delivery with its detail.
import { createServer, request } from "node:http";

const SHOP_TOKEN = "shop-secret-token-8f3a1c";
const PARTNER_TOKEN = "partner-inbound-token-51d2";
const USER = "integrator";
const PASSWORD = "integrator-passphrase-1";

/** upstream starts the fake external system on a free port; received lists its requests. */
function upstream() {
  const received = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body });
      const url = new URL(req.url, "http://x");
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ id: url.searchParams.get("id"), status: "shipped", path: url.pathname }));
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, received, base: `http://127.0.0.1:${server.address().port}` })));
}

/**
 * login signs in through /api from another loopback address (127.0.0.2): the sign-in steps
 * before this module spent the login rate limit of 127.0.0.1 (6 per 5 minutes per client IP),
 * and the console's own sign-in form is tested there.
 */
function login(base, principal, credentials) {
  const u = new URL("/api", base);
  const body = JSON.stringify({ resource: "security/auth", action: "login", version: "v1", params: { type: "password", principal, credentials } });
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: "POST", localAddress: "127.0.0.2", headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => {
          const env = JSON.parse(text);
          if (env.code !== 0 || !env.data?.tokens) reject(new Error(`login: ${text}`));
          else resolve(env.data.tokens);
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

export default async function (h) {
  const { s, step, check, open, shot } = h;
  const up = await upstream();
  h.cli(["user", "add", USER, "--roles", "admin", "--display-name", "Integrator", "--password-stdin"], `${PASSWORD}\n`);
  const { ctx, page } = await open();
  const dialog = () => page.getByRole("dialog");

  try {
    await step("integration: signed in, the Integration page is in the navigation", async () => {
      const tokens = await login(s.base, USER, PASSWORD);
      await page.goto(`${s.base}/console/`);
      await page.evaluate((tk) => localStorage.setItem("svc.console.tokens", JSON.stringify(tk)), tokens);
      await page.goto(`${s.base}/console/#/integration`);
      await page.reload(); // the hash change alone keeps the signed-out state in memory
      await page.getByRole("heading", { name: "Integration" }).waitFor();
      check(await page.getByRole("link", { name: "Integration" }).isVisible(), "Integration in the navigation");
    });

    await step("integration: contracts with their schemas", async () => {
      await page.getByRole("tab", { name: "Contracts" }).click();
      for (const [code, name, schema] of [
        ["order.status", "Order status", '{"type": "object", "required": ["id"]}'],
        ["svc.echo", "Echo", ""],
      ]) {
        await page.getByRole("button", { name: "New contract" }).click();
        await dialog().getByLabel("Code").fill(code);
        await dialog().getByLabel("Name", { exact: true }).fill(name);
        await dialog().getByLabel("Input schema").fill(schema);
        await dialog().getByRole("button", { name: "Create" }).click();
        await page.locator(`tr[data-contract="${code}"]`).waitFor();
      }
      check(/input/.test(await page.locator('tr[data-contract="order.status"]').innerText()), "the input schema is listed");
      // a schema that is not JSON is refused before it is sent
      await page.getByRole("button", { name: "New contract" }).click();
      await dialog().getByLabel("Code").fill("bad.schema");
      await dialog().getByLabel("Name", { exact: true }).fill("Bad");
      await dialog().getByLabel("Output schema").fill("{not json");
      await dialog().getByRole("button", { name: "Create" }).click();
      await dialog().getByRole("alert").getByText("Output schema is not valid JSON.").waitFor();
      await dialog().getByRole("button", { name: "Close" }).click();
      await shot(page, "integration-01-contracts");
    });

    await step("integration: a system with secrets, masked and kept on save", async () => {
      await page.getByRole("tab", { name: "Systems" }).click();
      await page.getByRole("button", { name: "New system" }).click();
      const d = dialog();
      await d.getByLabel("Code").fill("SHOP");
      await d.getByLabel("Name", { exact: true }).fill("Shop");
      await d.getByLabel("Base URL").fill(up.base);
      const out = d.getByRole("group", { name: "Outbound authentication" });
      await out.getByLabel("Scheme").selectOption("bearer");
      await out.getByLabel("token").fill(SHOP_TOKEN);
      const inb = d.getByRole("group", { name: "Inbound authentication" });
      await inb.getByLabel("Scheme").selectOption("bearer");
      await inb.getByLabel("token").fill(PARTNER_TOKEN);
      await d.getByRole("button", { name: "Create" }).click();
      const row = page.locator('tr[data-system="SHOP"]');
      await row.waitFor();
      check(/bearer/.test(await row.innerText()), "schemes listed");
      // edit: the stored secret shows as the mask; saving without retyping keeps it
      await row.getByRole("button", { name: "Edit" }).click();
      const token = dialog().getByRole("group", { name: "Outbound authentication" }).getByLabel("token");
      check((await token.inputValue()) === "******", `secret shown masked: ${await token.inputValue()}`);
      await dialog().getByText("stored, kept unless replaced").first().waitFor();
      check(!(await page.content()).includes(SHOP_TOKEN), "the token is not in the page");
      await dialog().getByLabel("Name", { exact: true }).fill("Shop (edited)");
      await shot(page, "integration-02-system-edit");
      await dialog().getByRole("button", { name: "Save" }).click();
      await row.getByText("Shop (edited)").waitFor();
      // key status: the scratch server has no secret_key, so SHOP's two secrets are plaintext
      await page.getByRole("button", { name: "Refresh" }).click();
      await page.getByText("no key: stored in plaintext").waitFor();
      // ... and the page says what that risks and how to set the key
      const advice = await page.locator("[data-key-advice]").innerText();
      check(/SVC_INTEGRATION_SECRET_KEY=/.test(advice) && /rotate-key/.test(advice) && /backup/.test(advice), `key advice: ${advice}`);
      const keys = await page.locator('tr[data-key-system="SHOP"]').innerText();
      check(/^SHOP Shop \(edited\)\s+0\s+2\s+0$/.test(keys.trim()), `key status of SHOP: ${JSON.stringify(keys)}`);
      await shot(page, "integration-03-systems");
    });

    await step("integration: adapters written in the highlighting editor, keyboard only", async () => {
      await page.getByRole("tab", { name: "Adapters" }).click();
      await page.getByRole("button", { name: "New adapter" }).click();
      let d = dialog();
      await d.getByLabel("System").selectOption({ label: "SHOP — Shop (edited)" });
      await d.getByLabel("Contract").selectOption({ label: "order.status — Order status" });
      const editor = d.getByLabel("Script");
      await editor.fill("");
      await editor.focus();
      // Tab inserts two spaces inside the editor instead of leaving it
      await page.keyboard.type("const r = http.get(`/status`, { query: { id: String(input.id) } });\n");
      await page.keyboard.type("if (!r.ok) {\n");
      await page.keyboard.press("Tab");
      await page.keyboard.type('errors.upstream("status " + r.status); // upstream failure\n}\n');
      await page.keyboard.type("return { id: Number(r.json().id), state: r.json().status, n: 42 };");
      const value = await editor.inputValue();
      check(value.includes('\n  errors.upstream("status "'), `Tab indented with spaces: ${JSON.stringify(value)}`);
      check(await editor.evaluate((el) => el === document.activeElement), "focus stayed in the editor");
      // highlighted: keywords, strings, template strings, numbers, comments
      const hl = d.locator(".code-hl");
      for (const [cls, text] of [
        ["tk-kw", "const"],
        ["tk-kw", "return"],
        ["tk-str", '"status "'],
        ["tk-str", "`/status`"],
        ["tk-num", "42"],
        ["tk-com", "// upstream failure"],
      ])
        check((await hl.locator(`.${cls}`).allInnerTexts()).includes(text), `${text} highlighted as ${cls}`);
      // Escape then Tab leaves the editor
      await page.keyboard.press("Escape");
      await page.keyboard.press("Tab");
      check(!(await editor.evaluate((el) => el === document.activeElement)), "Escape, Tab left the editor");
      await shot(page, "integration-04-adapter-editor");
      await d.getByRole("button", { name: "Create" }).click();
      await page.locator('tr[data-adapter="SHOP/order.status/outbound"]').waitFor();
      // the inbound adapter hands deliveries to the echo handler
      await page.getByRole("button", { name: "New adapter" }).click();
      d = dialog();
      await d.getByLabel("System").selectOption({ label: "SHOP — Shop (edited)" });
      await d.getByLabel("Contract").selectOption({ label: "svc.echo — Echo" });
      await d.getByLabel("Direction").selectOption("inbound");
      await d.getByLabel("Script").fill("return dispatch(JSON.parse(request.body));");
      await d.getByRole("button", { name: "Create" }).click();
      await page.locator('tr[data-adapter="SHOP/svc.echo/inbound"]').waitFor();
    });

    await step("integration: the test bench runs the adapter and shows the masked trace", async () => {
      await page.locator('tr[data-adapter="SHOP/order.status/outbound"]').getByRole("button", { name: "Test bench" }).click();
      await page.getByLabel("Input (JSON)").fill('{"id": 7}');
      await page.getByRole("button", { name: "Run", exact: true }).click();
      const result = page.locator(".bench-result");
      await result.getByText("succeeded").waitFor();
      const text = await result.innerText();
      check(/"state": "shipped"/.test(text) && /"id": 7/.test(text), `output shown: ${text}`);
      check(text.includes(`GET ${up.base}/status?id=7`), `trace step shown: ${text}`);
      check(/authorization\s+\*\*\*\*\*\*/i.test(text), `the mask is shown for the token: ${text}`);
      check(!(await page.content()).includes(SHOP_TOKEN), "the secret is not in the page");
      // the upstream got the real token: the one kept when the system was saved without it
      const got = up.received.find((r) => r.url === "/status?id=7");
      check(got?.headers.authorization === `Bearer ${SHOP_TOKEN}`, `upstream saw the kept token: ${got?.headers.authorization}`);
      await shot(page, "integration-05-bench-trace");
      // an input the contract's schema refuses is reported with its kind
      await page.getByLabel("Input (JSON)").fill("{}");
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await result.getByText("input_invalid").waitFor();
    });

    await step("integration: test_connection and diagnose_routes from the bench", async () => {
      await page.getByRole("tab", { name: "Test connection" }).click();
      await page.getByLabel("System").selectOption({ label: "SHOP — Shop (edited)" });
      await page.getByLabel("Path").fill("/health");
      const before = up.received.length;
      await page.getByRole("button", { name: "Run", exact: true }).click();
      const probe = page.locator('[data-probe="HTTP"]');
      await probe.getByText("reachable").waitFor();
      check(/200/.test(await probe.innerText()), `status shown: ${await probe.innerText()}`);
      check(up.received.slice(before).some((r) => r.url === "/health"), "the upstream was probed");
      await shot(page, "integration-06-test-connection");
      await page.getByRole("tab", { name: "Diagnose routes" }).click();
      await page.getByRole("button", { name: "Run", exact: true }).click();
      // no routes yet: nothing to find
      await page.locator(".bench-result").getByText("No findings: every route resolves.").waitFor();
    });

    await step("integration: the invocation log shows inbound deliveries, their detail and charts", async () => {
      // the partner delivers twice through the gateway: once well, once with a body the
      // adapter cannot parse
      const deliver = (body) =>
        fetch(`${s.base}/integration/inbound/SHOP/svc.echo`, {
          method: "POST",
          headers: { authorization: `Bearer ${PARTNER_TOKEN}`, "content-type": "application/json" },
          body,
        });
      const ok = await deliver('{"order": 42}');
      check(ok.status === 200 && (await ok.text()) === '{"order":42}', `delivery answered ${ok.status}`);
      const bad = await deliver("{not json");
      check(bad.status === 500, `bad delivery answered ${bad.status}`);
      await page.getByRole("tab", { name: "Invocation log" }).click();
      const rows = page.locator("tr[data-log]");
      await rows.nth(1).waitFor();
      check((await rows.count()) === 2, `two rows: ${await rows.count()}`);
      check(/script/.test(await rows.nth(0).innerText()) && /succeeded/.test(await rows.nth(1).innerText()), "newest first, outcomes shown");
      const pair = await page.locator('tr[data-pair="SHOP / svc.echo"]').innerText();
      check(/^SHOP \/ svc\.echo\s+2\s+1\s/.test(pair), `summary per system and contract: ${JSON.stringify(pair)}`);
      check((await page.locator(".itg-charts canvas").count()) === 3, "three charts drawn");
      // filter by failure kind
      await page.getByLabel("Failure kind").selectOption("script");
      await page.getByRole("button", { name: "Filter" }).click();
      await page.locator('tr[data-pair="SHOP / svc.echo"]').getByText("1", { exact: true }).first().waitFor();
      await page.waitForFunction(() => document.querySelectorAll("tr[data-log]").length === 1);
      await page.getByLabel("Failure kind").selectOption("");
      await page.getByRole("button", { name: "Filter" }).click();
      await page.waitForFunction(() => document.querySelectorAll("tr[data-log]").length === 2);
      await shot(page, "integration-07-log");
      // detail: the dispatched input and output, the caller's request with its token masked
      await rows.nth(1).getByRole("button", { name: "Details" }).click();
      const d = dialog();
      const text = await d.innerText();
      check(/"order": 42/.test(text), `input shown: ${text}`);
      check(/\*\*\*\*\*\*/.test(text) && !text.includes(PARTNER_TOKEN), `the token is masked in the detail: ${text}`);
      check(!(await page.content()).includes(PARTNER_TOKEN), "the partner's token is not in the page");
      await shot(page, "integration-08-log-detail");
      await d.getByRole("button", { name: "Close" }).click();
    });

    await step("integration: routes, diagnose_routes and code maps", async () => {
      await page.getByRole("tab", { name: "Routes" }).click();
      await page.getByRole("button", { name: "New route" }).click();
      let d = dialog();
      await d.getByLabel("System").selectOption({ label: "SHOP — Shop (edited)" });
      await d.getByRole("button", { name: "Create" }).click();
      await page.locator('tr[data-route="/"]').getByText("every contract").waitFor();
      // the default route sends every contract to SHOP, which has no adapter for bad.schema
      await page.getByRole("tab", { name: "Test bench" }).click();
      await page.getByRole("tab", { name: "Diagnose routes" }).click();
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await page.getByRole("heading", { name: "Route findings" }).waitFor();
      check(/wildcard_gap/.test(await page.locator(".bench-result").innerText()), "the wildcard gap is found");
      await page.getByRole("tab", { name: "Code maps" }).click();
      await page.getByRole("button", { name: "New code map" }).click();
      d = dialog();
      await d.getByLabel("System").selectOption({ label: "SHOP — Shop (edited)" });
      await d.getByLabel("Code set").fill("gender");
      await d.getByLabel("Name", { exact: true }).fill("Gender");
      await d.getByLabel("Entries").fill('M | 1 = male\nF = female\n"U" = 0');
      await d.getByRole("button", { name: "Create" }).click();
      const row = page.locator('tr[data-codemap="SHOP/gender"]');
      await row.waitFor();
      check(/\b3\b/.test(await row.innerText()), `three entries: ${await row.innerText()}`);
      await row.getByRole("button", { name: "Edit" }).click();
      const entries = await dialog().getByLabel("Entries").inputValue();
      check(entries === '"M" | 1 = "male"\n"F" = "female"\n"U" = 0', `entries read back: ${JSON.stringify(entries)}`);
      // a value listed twice is refused by the server (2629)
      h.expect([/status of 400/]);
      await dialog().getByLabel("Entries").fill("M = male\nM = female");
      await dialog().getByRole("button", { name: "Save" }).click();
      await dialog().getByRole("alert").getByText(/2629/).waitFor();
      h.expect([]);
      await shot(page, "integration-09-code-map");
      await dialog().getByRole("button", { name: "Close" }).click();
    });

    await step("integration: phone width and Simplified Chinese", async () => {
      const { ctx: c, page: p } = await open({ width: 390, height: 844 }, "zh-CN");
      const tokens = await login(s.base, USER, PASSWORD);
      await p.goto(`${s.base}/console/`);
      await p.evaluate((tk) => localStorage.setItem("svc.console.tokens", JSON.stringify(tk)), tokens);
      await p.goto(`${s.base}/console/#/integration`);
      await p.reload();
      await p.getByRole("heading", { name: "集成" }).waitFor();
      await p.getByRole("tab", { name: "测试台" }).click();
      await p.getByLabel("系统").selectOption({ label: "SHOP — Shop (edited)" });
      await p.getByLabel("契约").selectOption({ label: "order.status — Order status" });
      await p.getByLabel("输入（JSON）").fill('{"id": 9}');
      await p.getByRole("button", { name: "运行", exact: true }).click();
      await p.locator(".bench-result").getByText("线路追踪").waitFor();
      const width = await p.evaluate(() => document.documentElement.scrollWidth);
      check(width <= 400, `no horizontal scrolling at phone width: ${width}`);
      check(!(await p.content()).includes(SHOP_TOKEN), "the secret is not in the page");
      await shot(p, "integration-10-phone-zh");
      await c.close();
    });
  } finally {
    await ctx.close();
    up.server.close();
  }
}

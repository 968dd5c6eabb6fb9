// Browser tests of the Approval pages: a flow deployed through /api (start → approval by Bob →
// end, with a form of a required text and a bounded number), started from the console by
// Alice with the form's validation, decided from Bob's inbox, the detail's graph showing the
// progress, the instance ending approved; then the administration's read-only flow graph and
// metrics.
import { apiClient, oneApproverFlow, signInZh } from "./lib.mjs";

const ADMIN = { user: "apvadmin", pw: "apvadmin-passphrase-1" };
const ALICE = { user: "alice", pw: "alice-passphrase-1" };
const BOB = { user: "bob", pw: "bob-passphrase-1" };

const FORM = {
  presentations: {
    pc: {
      children: [
        {
          id: "s1",
          type: "section",
          children: [
            { id: "f1", type: "textfield", key: "reason", label: "Reason", validate: { required: true, maxLength: 60 } },
            { id: "f2", type: "number", key: "amount", label: "Amount", precision: 2, validate: { required: true, min: 1, max: 5000 } },
            {
              id: "f3",
              type: "select",
              key: "kind",
              label: "Kind",
              dataSource: { kind: "static", options: [{ label: "Travel", value: "travel" }, { label: "Meals", value: "meals" }] },
            },
          ],
        },
      ],
    },
  },
};

const flow = oneApproverFlow;

export default async function (h) {
  const { s, step, check, open, shot, signIn, cli } = h;
  const { api, login } = apiClient(s, check);
  cli(["user", "add", ADMIN.user, "--roles", "admin", "--password-stdin"], `${ADMIN.pw}\n`);
  cli(["user", "add", ALICE.user, "--roles", "staff", "--display-name", "Alice", "--password-stdin"], `${ALICE.pw}\n`);
  cli(["user", "add", BOB.user, "--roles", "staff", "--display-name", "Bob", "--password-stdin"], `${BOB.pw}\n`);
  const ok = (r, what) => (check(r.code === 0, `${what}: ${JSON.stringify(r)}`), r.data);
  let instanceId = "";

  await step("approval: a flow deployed, published and activated through /api", async () => {
    const admin = await login(ADMIN);
    const bob = ok(await api(await login(BOB), "security/auth", "get_user_info"), "bob's user info");
    const cat = ok(await api(admin, "approval/category", "create", { code: "e2e", name: "Expenses", sortOrder: 0, isActive: true }), "category");
    const f = ok(
      await api(admin, "approval/flow", "create", {
        code: "expense",
        name: "Expense claim",
        categoryId: cat.id,
        bindingMode: "standalone",
        isAllInitiationAllowed: true,
        instanceTitleTemplate: "",
      }),
      "flow",
    );
    const v = ok(await api(admin, "approval/flow", "deploy", { flowId: f.id, flowDefinition: flow(bob.id), formSchema: FORM }), "deploy");
    ok(await api(admin, "approval/flow", "publish_version", { versionId: v.id }), "publish");
    ok(await api(admin, "approval/flow", "toggle_active", { flowId: f.id, isActive: true }), "activate");
  });

  await step("approval: Alice starts the flow from the console; the form validates", async () => {
    const { ctx, page } = await open();
    await signIn(page, ALICE.user, ALICE.pw);
    await page.getByRole("link", { name: "Approval" }).click();
    await page.getByRole("tab", { name: "Start", exact: true }).click();
    await page.getByRole("button", { name: "Start Expense claim" }).click();
    const dlg = page.getByRole("dialog");
    await dlg.getByLabel("Reason").waitFor();
    await dlg.getByRole("button", { name: "Submit" }).click();
    await dlg.getByText("Reason is required.").waitFor();
    await dlg.getByLabel("Reason").fill("Train to the customer");
    await dlg.getByLabel("Amount").fill("9000");
    await dlg.getByLabel("Kind").selectOption({ label: "Travel" });
    await dlg.getByRole("button", { name: "Submit" }).click();
    await dlg.getByText("At most 5000.").waitFor();
    await shot(page, "approval-01-start-form");
    await dlg.getByLabel("Amount").fill("120.5");
    await dlg.getByRole("button", { name: "Submit" }).click();
    // the detail opens: running, the approval node current
    await page.locator("[data-instance-status=running]").waitFor();
    instanceId = new URLSearchParams(page.url().split("?")[1]).get("instance");
    check(!!instanceId, `the detail's address names the instance: ${page.url()}`);
    await page.locator('.flow-graph [data-node="a"][data-status="active"]').waitFor();
    check((await page.locator('.flow-graph [data-node="s"]').getAttribute("data-status")) === "passed", "start node passed");
    check((await page.locator('.flow-graph [data-node="e"]').getAttribute("data-status")) === "pending", "end node pending");
    check((await page.locator('[data-field="amount"] input').inputValue()) === "120.5", "form value shown");
    await page.getByRole("button", { name: "Urge Bob" }).click();
    await page.getByText("Bob was reminded.").waitFor();
    await page.locator("ol.timeline", { hasText: "urge" }).waitFor();
    await shot(page, "approval-02-started");
    await ctx.close();
  });

  await step("approval: Bob decides from his inbox; the instance ends approved", async () => {
    const { ctx, page } = await open();
    await signIn(page, BOB.user, BOB.pw);
    await page.locator('.nav-count[data-count="1"]').waitFor();
    await page.getByRole("link", { name: /Approval/ }).click();
    const row = page.locator(`tr[data-instance="${instanceId}"]`);
    await row.waitFor();
    check(/Manager/.test(await row.innerText()) && /Alice/.test(await row.innerText()), `inbox row: ${await row.innerText()}`);
    await shot(page, "approval-03-inbox");
    await row.getByRole("button", { name: /^Open/ }).click();
    await page.getByRole("heading", { name: "Your task" }).waitFor();
    await page.getByLabel("Opinion").fill("Fine, travel approved.");
    await page.getByRole("button", { name: "Approve", exact: true }).click();
    await page.locator("[data-instance-status=approved]").waitFor();
    for (const n of ["s", "a", "e"]) {
      const st = await page.locator(`.flow-graph [data-node="${n}"]`).getAttribute("data-status");
      check(st === "passed", `node ${n} passed after the decision: ${st}`);
    }
    check(/Fine, travel approved\./.test(await page.locator("ol.timeline").innerText()), "the opinion is on the timeline");
    await page.locator(".nav-count").waitFor({ state: "detached" });
    await shot(page, "approval-04-approved");
    await ctx.close();
    const detail = ok(await api(await login(ALICE), "approval/my", "get_instance_detail", { instanceId }), "alice's detail");
    check(detail.instance.status === "approved", `the server says approved: ${detail.instance.status}`);
  });

  await step("approval: administration — the flow's definition read-only as a graph, metrics", async () => {
    const { ctx, page } = await open();
    await signIn(page, ADMIN.user, ADMIN.pw);
    await page.getByRole("link", { name: "Approval" }).click();
    await page.getByRole("tab", { name: "Administration" }).click();
    const flowRow = page.locator('tr[data-flow="expense"]');
    await flowRow.getByRole("button", { name: "Versions" }).click();
    const dlg = page.getByRole("dialog");
    await dlg.locator(".flow-graph .node").first().waitFor();
    check((await dlg.locator(".flow-graph .node").count()) === 3, "three nodes drawn");
    check(/original framework's flow document/.test(await page.locator(".page").innerText()), "the page says what the designer saves");
    await shot(page, "approval-05-flow-definition");
    await dlg.getByRole("button", { name: "Close" }).click();
    await page.getByRole("tab", { name: "Instances" }).click();
    await page.locator(`tr[data-instance="${instanceId}"]`).waitFor();
    await page.getByRole("tab", { name: "Delegations" }).click();
    const bobId = ok(await api(await login(BOB), "security/auth", "get_user_info"), "bob's user info").id;
    await page.getByRole("button", { name: "New delegation" }).click();
    const dd = page.getByRole("dialog");
    // the delegator found by name, the delegate typed as an id
    await dd.getByLabel("Delegator", { exact: true }).fill("bob");
    await dd.getByRole("option", { name: new RegExp(`^Bob bob · ${bobId}$`) }).click();
    await dd.getByLabel("Delegate", { exact: true }).fill("someone-else");
    await dd.getByRole("option", { name: "Use the id “someone-else”" }).click();
    await dd.getByLabel("From").fill("2026-12-01T09:00");
    await dd.getByLabel("Until").fill("2026-12-08T18:00");
    await dd.getByRole("button", { name: "Save" }).click();
    await page.getByText("Delegation created.").waitFor();
    await page.locator("td", { hasText: "someone-else" }).waitFor();
    await page.getByRole("tab", { name: "Metrics" }).click();
    await page.locator("svg.bars").first().waitFor();
    check(/approved/.test(await page.locator("svg.bars").first().textContent()), "instances by status drawn");
    const avg = await page.getByText(/Average completion/).textContent();
    check(/Average completion: (\d+\.\d s|— \(no finished instances\))/.test(avg) && !/-1\.0/.test(avg), `average completion shown as a value or a dash: ${avg}`);
    check(/applied/.test(await page.locator("svg.bars").nth(2).textContent()), "business records by status drawn");
    await shot(page, "approval-06-metrics");
    // the standalone flow writes no business record: the list (failed ones by default) is empty
    await page.getByRole("tab", { name: "Business records" }).click();
    await page.getByText("No business records.").waitFor();
    check((await page.getByLabel("Status").inputValue()) === "failed", "business records filtered to the failed ones");
    await shot(page, "approval-06-business-records");
    await ctx.close();
  });

  await step("approval: phone width and Chinese — the inbox and the graph fit", async () => {
    const { ctx, page } = await open({ width: 390, height: 800 }, "zh-CN");
    await signInZh(page, s.base, ALICE.user, ALICE.pw);
    await page.goto(`${s.base}/console/#/approval?instance=${instanceId}`);
    await page.locator("[data-instance-status=approved]").waitFor();
    check(/已同意/.test(await page.locator("h1").innerText()), "status in Chinese");
    await shot(page, "approval-07-phone-zh");
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    check(wide <= 390, `the page is no wider than the phone: ${wide}`);
    await ctx.close();
  });
}

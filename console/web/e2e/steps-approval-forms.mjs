// Browser tests of the approval administration's editing and the form designer: a category
// renamed, moved under another and ordered; a delegation created and edited with the user
// picker (by keyboard); a flow's start form designed from empty with four field kinds and
// their rules and a section, tried in the preview (which validates with the Start page's renderer), deployed
// as a new version the server accepts; the same pages in Chinese at phone width.
import { apiClient, oneApproverFlow, signInZh } from "./lib.mjs";

const ADMIN = { user: "formadmin", pw: "formadmin-passphrase-1" };
// Its own user name: the core steps create "carol" through the Users page.
const CAROL = { user: "formcarol", pw: "carol-passphrase-1" };

const flow = oneApproverFlow;

/** canon is JSON with every object's keys sorted (a stored document may reorder them). */
const canon = (v) =>
  JSON.stringify(v, (_, x) => (x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));

export default async function (h) {
  const { s, step, check, open, shot, signIn, cli } = h;
  const { api, login } = apiClient(s, check);
  cli(["user", "add", ADMIN.user, "--roles", "admin,approval:super_admin", "--display-name", "Form Admin", "--password-stdin"], `${ADMIN.pw}\n`);
  cli(["user", "add", CAROL.user, "--roles", "staff", "--display-name", "Carol", "--password-stdin"], `${CAROL.pw}\n`);
  const ok = (r, what) => (check(r.code === 0, `${what}: ${JSON.stringify(r)}`), r.data);
  let flowId = "";
  let carolId = "";

  const admin = async (page, part) => {
    await signIn(page, ADMIN.user, ADMIN.pw);
    await page.getByRole("link", { name: "Approval" }).click();
    await page.getByRole("tab", { name: "Administration" }).click();
    await page.getByRole("tab", { name: part }).click();
  };

  await step("approval-forms: two categories and a flow without a form, through /api", async () => {
    const a = await login(ADMIN);
    carolId = ok(await api(await login(CAROL), "security/auth", "get_user_info"), "carol's user info").id;
    ok(await api(a, "approval/category", "create", { code: "travel", name: "Travel", sortOrder: 0, isActive: true }), "category travel");
    const trips = ok(await api(a, "approval/category", "create", { code: "trips", name: "Trips", sortOrder: 0, isActive: true }), "category trips");
    const f = ok(
      await api(a, "approval/flow", "create", { code: "trip", name: "Trip request", categoryId: trips.id, bindingMode: "standalone", isAllInitiationAllowed: true, instanceTitleTemplate: "" }),
      "flow",
    );
    flowId = f.id;
    ok(await api(a, "approval/flow", "deploy", { flowId, flowDefinition: flow(carolId) }), "deploy without a form");
  });

  await step("approval-forms: a category renamed, moved under another and ordered", async () => {
    const { ctx, page } = await open();
    await admin(page, "Categories");
    await page.locator('tr[data-category="trips"]').getByRole("button", { name: "Edit" }).click();
    const dlg = page.getByRole("dialog");
    await dlg.getByLabel("Name").fill("Business trips");
    await dlg.getByLabel("Parent").selectOption({ label: "Travel" });
    await dlg.getByLabel("Order").fill("5");
    await dlg.getByRole("button", { name: "Save" }).click();
    await page.getByText("Business trips saved.").waitFor();
    const row = page.locator('tr[data-category="trips"]');
    // the tree is read again after the notice: wait for the row under its new parent
    await row.locator("td.indent-1", { hasText: "Business trips" }).waitFor();
    check((await row.locator("td").nth(2).innerText()) === "5", "its order is 5");
    await shot(page, "approval-forms-01-category");
    const tree = ok(await api(await login(ADMIN), "approval/category", "find_tree"), "tree");
    const travel = tree.find((c) => c.code === "travel");
    check(travel?.children?.[0]?.name === "Business trips" && travel.children[0].sortOrder === 5, `the server holds the edit: ${JSON.stringify(tree)}`);
    await ctx.close();
  });

  await step("approval-forms: a delegation chosen with the user picker by keyboard, then edited", async () => {
    const { ctx, page } = await open();
    await admin(page, "Delegations");
    await page.getByRole("button", { name: "New delegation" }).click();
    const dlg = page.getByRole("dialog");
    const delegator = dlg.getByRole("combobox", { name: "Delegator" });
    await delegator.fill("formcar");
    await dlg.getByRole("option", { name: /^Carol formcarol/ }).waitFor();
    await delegator.press("Enter");
    await dlg.locator(".chip", { hasText: "Carol" }).waitFor();
    const delegate = dlg.getByRole("combobox", { name: "Delegate", exact: true });
    await delegate.fill("form");
    await dlg.getByRole("option", { name: /^Form Admin formadmin/ }).waitFor();
    await delegate.press("ArrowDown"); // the first option is already active: down wraps to the typed id…
    await delegate.press("ArrowUp"); // …and up comes back to Form Admin
    await delegate.press("Enter");
    await dlg.locator(".chip", { hasText: "Form Admin" }).waitFor();
    await dlg.getByLabel("From").fill("2026-12-01T09:00");
    await dlg.getByLabel("Until").fill("2026-12-20T18:00");
    await dlg.getByLabel("Reason").fill("Holiday");
    await shot(page, "approval-forms-02-delegation-picker");
    await dlg.getByRole("button", { name: "Save" }).click();
    await page.getByText("Delegation created.").waitFor();
    const row = page.locator("tr[data-delegation]", { hasText: "Holiday" });
    await row.getByText("Carol").waitFor();
    await row.getByText("Form Admin").waitFor();
    await row.getByRole("button", { name: "Edit" }).click();
    await dlg.getByLabel("Reason").fill("Holiday, extended");
    await dlg.getByRole("button", { name: "Save" }).click();
    await page.getByText("Delegation saved.").waitFor();
    await page.locator("tr[data-delegation]", { hasText: "Holiday, extended" }).waitFor();
    await shot(page, "approval-forms-03-delegations");
    const list = ok(await api(await login(ADMIN), "approval/delegation", "find_page", {}), "delegations");
    const d = list.items.find((x) => x.reason === "Holiday, extended");
    check(d?.delegatorId === carolId, `the delegator is Carol's id: ${JSON.stringify(d)}`);
    await ctx.close();
  });

  await step("approval-forms: a start form of four field kinds with rules, previewed and deployed", async () => {
    const { ctx, page } = await open();
    await admin(page, "Flows");
    await page.locator('tr[data-flow="trip"]').getByRole("button", { name: "Form" }).click();
    const dlg = page.getByRole("dialog");
    await dlg.getByText("No fields yet").waitFor();
    const props = dlg.getByRole("region", { name: "Properties" });
    const setKey = async (key, label) => {
      await props.getByLabel("Key").fill(key);
      await props.getByLabel("Label", { exact: true }).fill(label);
    };
    // text input: required, 3–40 characters, letters and spaces only
    await dlg.getByRole("button", { name: "+ Text input" }).click();
    await setKey("purpose", "Purpose");
    await props.getByLabel("Required").check();
    await props.getByLabel("Minimum length").fill("3");
    await props.getByLabel("Maximum length").fill("40");
    await props.getByLabel("Pattern", { exact: true }).fill("^[A-Za-z ]+$");
    await props.getByLabel("Message when the pattern does not match").fill("Letters and spaces only");
    // number: two decimal places, 1 to 1000, required
    await dlg.getByRole("button", { name: "+ Number input" }).click();
    await setKey("cost", "Cost");
    await props.getByLabel("Required").check();
    await props.getByLabel("Decimal places").fill("2");
    await props.getByLabel("Minimum", { exact: true }).fill("1");
    await props.getByLabel("Maximum", { exact: true }).fill("1000");
    // select with two options, shown as radio buttons and back
    await dlg.getByRole("button", { name: "+ Drop-down list" }).click();
    await setKey("mode", "Mode");
    await props.getByRole("button", { name: "Add option" }).click();
    await props.getByLabel("Option 1 label").fill("Train");
    await props.getByLabel("Option 1 value").fill("train");
    await props.getByRole("button", { name: "Add option" }).click();
    await props.getByLabel("Option 2 label").fill("Plane");
    await props.getByLabel("Option 2 value").fill("plane");
    await props.getByLabel("Required").check();
    // date, then moved above the select
    await dlg.getByRole("button", { name: "+ Date" }).click();
    await setKey("day", "Day");
    await props.getByLabel("Required").check();
    await dlg.getByRole("button", { name: "Move Day up" }).click();
    // a section after them, titled, moved up, and the select moved into it (by keyboard)
    await dlg.getByRole("button", { name: "+ Section" }).click();
    await props.getByLabel("Title").fill("Travel details");
    await dlg.getByRole("button", { name: "Move Travel details up" }).click();
    await dlg.getByRole("button", { name: "Move Mode into the section above" }).focus();
    await page.keyboard.press("Enter");
    const order = await dlg.locator(".fd-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-key") || "section"));
    check(JSON.stringify(order) === JSON.stringify(["purpose", "cost", "day", "section", "mode"]), `fields in order: ${order}`);
    check((await dlg.locator(".fd-tree .fd-tree .fd-row").getAttribute("data-key")) === "mode", "the select sits in the section");
    await shot(page, "approval-forms-04-designer");

    // the preview validates with the Start page's rules
    await dlg.getByRole("tab", { name: "Preview" }).click();
    await dlg.getByRole("button", { name: "Check the form" }).click();
    await dlg.getByRole("alert").filter({ hasText: "Purpose is required." }).waitFor();
    await dlg.getByRole("alert").filter({ hasText: "Cost is required." }).waitFor();
    await dlg.getByLabel("Purpose").fill("Trip 2");
    await dlg.getByLabel("Cost").fill("5000");
    await dlg.getByLabel("Day").fill("2026-12-24");
    await dlg.getByLabel("Mode").selectOption({ label: "Plane" });
    await dlg.getByRole("button", { name: "Check the form" }).click();
    await dlg.getByRole("alert").filter({ hasText: "Letters and spaces only" }).waitFor();
    await dlg.getByRole("alert").filter({ hasText: "At most 1000." }).waitFor();
    await shot(page, "approval-forms-05-preview-errors");
    await dlg.getByLabel("Purpose").fill("Customer visit");
    await dlg.getByLabel("Cost").fill("420.5");
    await dlg.getByRole("button", { name: "Check the form" }).click();
    await dlg.getByText("The form is valid.").waitFor();
    await shot(page, "approval-forms-06-preview-valid");

    await dlg.getByRole("button", { name: "Deploy as a new version" }).click();
    await dlg.getByText("Deployed as a new draft version").waitFor();
    const versions = ok(await api(await login(ADMIN), "approval/flow", "find_versions", { flowId }), "versions");
    const last = versions.reduce((a, v) => (v.version > a.version ? v : a));
    check(last.version === 2 && last.status === "draft", `a second, draft version: ${JSON.stringify(versions)}`);
    const g = ok(await api(await login(ADMIN), "approval/flow", "get_graph", { flowId, versionId: last.id }), "graph");
    const fields = g.version.formFields.map((f) => `${f.key}:${f.kind}:${f.isRequired ? "req" : ""}`);
    check(JSON.stringify(fields) === JSON.stringify(["purpose:input:req", "cost:number:req", "day:date:req", "mode:select:req"]), `the server's fields: ${fields}`);
    const purpose = g.version.formFields[0].validation;
    check(purpose.minLength === 3 && purpose.maxLength === 40 && purpose.pattern === "^[A-Za-z ]+$" && purpose.message === "Letters and spaces only", `rules: ${JSON.stringify(purpose)}`);
    check(g.version.formFields[1].scale === 2 && g.version.formFields[1].validation.max === 1000, `number: ${JSON.stringify(g.version.formFields[1])}`);
    check(JSON.stringify(g.version.formFields[3].options) === JSON.stringify([{ label: "Train", value: "train" }, { label: "Plane", value: "plane" }]), "options");
    check(canon(g.version.flowSchema) === canon(flow(carolId)), `the definition deployed unchanged: ${JSON.stringify(g.version.flowSchema)}`);
    await ctx.close();
  });

  await step("approval-forms: phone width and Chinese — categories, delegations and the designer fit", async () => {
    const { ctx, page } = await open({ width: 390, height: 800 }, "zh-CN");
    await signInZh(page, s.base, ADMIN.user, ADMIN.pw);
    await page.goto(`${s.base}/console/#/approval`);
    await page.getByRole("tab", { name: "管理" }).click();
    await page.getByRole("tab", { name: "分类" }).click();
    await page.locator('tr[data-category="trips"]').waitFor();
    const fits = async (what) => {
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      check(wide <= 390, `${what} is no wider than the phone: ${wide}`);
    };
    await fits("categories");
    await page.getByRole("tab", { name: "委托" }).click();
    await page.getByRole("button", { name: "新建委托" }).click();
    await page.getByRole("dialog").getByRole("combobox", { name: "委托人" }).fill("formcar");
    await page.getByRole("option", { name: /^Carol formcarol/ }).waitFor();
    await shot(page, "approval-forms-07-phone-zh-delegation");
    await page.getByRole("dialog").getByRole("button", { name: "关闭" }).click();
    await page.getByRole("tab", { name: "流程" }).click();
    await page.locator('tr[data-flow="trip"]').getByRole("button", { name: "表单" }).click();
    const dlg = page.getByRole("dialog");
    await dlg.getByRole("button", { name: "+ 单行文本" }).click();
    await dlg.getByRole("region", { name: "属性" }).getByLabel("必填").check();
    await shot(page, "approval-forms-08-phone-zh-designer");
    await fits("the designer");
    await dlg.getByRole("tab", { name: "预览" }).click();
    await dlg.getByRole("button", { name: "校验表单" }).click();
    await dlg.getByText("textfield1").first().waitFor();
    await shot(page, "approval-forms-09-phone-zh-preview");
    await fits("the preview");
    await ctx.close();
  });
}

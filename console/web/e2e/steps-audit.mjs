// Browser tests of the Audit page: a user's logins (one failed) reach the persisted trail of
// the shipped binary (configs/application.toml turns it on); the Users page links to that
// user's trail, which lists only their records with a detail view and the calls/failures chart,
// in English and in Chinese.
import { apiClient } from "./lib.mjs";

const AUDITOR = { user: "auditor1", pw: "auditor-passphrase-1" };
const TARGET = { user: "traced1", pw: "traced-passphrase-1" };

export default async function (h) {
  const { s, step, check, open, shot, signIn, cli, expect } = h;
  const { api, login } = apiClient(s, check);

  await step("audit: a user's trail from the Users page, its detail and chart", async () => {
    cli(["user", "add", AUDITOR.user, "--roles", "auditor", "--password-stdin"], `${AUDITOR.pw}\n`);
    cli(["user", "add", TARGET.user, "--roles", "viewer", "--password-stdin"], `${TARGET.pw}\n`);
    const bad = await api(null, "security/auth", "login", { type: "password", principal: TARGET.user, credentials: "not-the-password" });
    check(bad.code !== 0, `wrong password refused: ${JSON.stringify(bad)}`);
    await login(TARGET);
    // An audited call by the auditor (a refused one: it may only read users) is in the trail too.
    const refused = await api(await login(AUDITOR), "security/user", "disable", { id: "nobody" });
    check(refused.code === 1100, `auditor may not disable: ${JSON.stringify(refused)}`);

    const { ctx: c, page: p } = await open();
    expect([/status of 403/]);
    await signIn(p, AUDITOR.user, AUDITOR.pw);
    // the menu is drawn once the caller's permissions are known: wait for it, then read it
    await p.locator("nav#nav a", { hasText: "Audit" }).waitFor();
    const links = await p.locator("nav#nav a").allInnerTexts();
    check(links.includes("Audit") && links.includes("Users"), `auditor's menu: ${links}`);
    await p.getByRole("link", { name: "Users" }).click();
    await p.locator(`a[data-audit-link="${TARGET.user}"]`).click();
    await p.getByRole("heading", { name: "Audit" }).waitFor();
    // the records are written asynchronously: reload until both logins are listed
    let rows = 0;
    for (let i = 0; i < 20 && rows < 2; i++) {
      await p.locator("tr[data-record]").first().waitFor({ timeout: 5000 }).catch(() => {});
      rows = await p.locator("tr[data-record]").count();
      if (rows < 2) {
        await p.getByRole("button", { name: "Filter" }).click();
        await p.waitForTimeout(300);
      }
    }
    const users = await p.locator("tr[data-record]").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-user")));
    check(users.length === 2 && users.every((u) => u === TARGET.user), `the trail of ${TARGET.user} only: ${users}`);
    check((await p.locator('tr[data-record] [data-ok="false"]').count()) === 1, "one failed login");
    check((await p.locator(".audit-chart svg g[data-bucket]").count()) >= 1, "the chart has a bucket");
    await shot(p, "audit-01-user-trail");

    await p.locator('tr[data-record]:has([data-ok="false"]) button').click();
    const dialog = p.getByRole("dialog");
    await dialog.getByText("login_failed").waitFor();
    const text = await dialog.innerText();
    check(/Security event/.test(text) && /"reason"/.test(text), `detail: ${text}`);
    await shot(p, "audit-02-detail");
    await dialog.getByRole("button", { name: "Close" }).click();

    // every record, filtered to failures: the auditor's refused call is one of them
    await p.locator('input[name="user"]').fill("");
    await p.locator('select[name="result"]').selectOption("failed");
    await p.getByRole("button", { name: "Filter" }).click();
    await p.locator("tr[data-record] td.mono", { hasText: "security/user disable" }).first().waitFor();
    check((await p.locator('tr[data-record] [data-ok="true"]').count()) === 0, "only failures listed");
    await shot(p, "audit-03-failures");

    await p.getByLabel("Language").selectOption("zh-CN");
    await p.getByRole("heading", { name: "审计" }).waitFor();
    await p.getByText("调用与失败").waitFor();
    await shot(p, "audit-04-zh");
    await p.getByLabel("语言").selectOption("en");
    expect([]);
    await c.close();
  });
}

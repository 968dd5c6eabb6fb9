// Browser tests of the Backups page (issue #47): a backup made from the page, downloaded through
// its link, checked for restore (the steps shown), then a tampered archive refused; the page in
// Simplified Chinese.
import { readFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { apiClient } from "./lib.mjs";

const OPS = { user: "bkops", pw: "bkops-passphrase-1" };

export default async function (h) {
  const { s, step, check, open, shot, signIn, cli, expect } = h;
  const { api, login } = apiClient(s, check);
  cli(["user", "add", OPS.user, "--roles", "admin", "--password-stdin"], `${OPS.pw}\n`);
  let token = "";

  const toBackups = async (page) => {
    await signIn(page, OPS.user, OPS.pw);
    await page.locator("nav#nav").waitFor({ state: "attached" });
    await page.goto(`${s.base}/console/#/backups`);
    await page.getByRole("heading", { name: "Backups", level: 1 }).waitFor();
  };
  const newest = async () => {
    const r = await api(token, "sys/backup", "find_page", {});
    check(r.code === 0, `find_page: ${JSON.stringify(r)}`);
    return r.data.items[0];
  };

  await step("backups: back up now from the page, the archive is listed as succeeded", async () => {
    token = await login(OPS);
    const { ctx, page } = await open();
    await toBackups(page);
    await page.getByRole("button", { name: "Back up now" }).click();
    await page.getByText("The backup has started").waitFor();
    const deadline = Date.now() + 60_000;
    let b = await newest();
    while (b?.status !== "succeeded" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 300));
      b = await newest();
    }
    check(b?.status === "succeeded", `backup state: ${JSON.stringify(b)}`);
    await page.reload();
    await page.locator(`tr[data-id="${b.id}"]`).getByText("succeeded").waitFor();
    await shot(page, "backup-01-list");
    await ctx.close();
  });

  await step("backups: download saves the whole archive (its trailer included)", async () => {
    const { ctx, page } = await open();
    await toBackups(page);
    const b = await newest();
    const [dl] = await Promise.all([page.waitForEvent("download"), page.locator(`tr[data-id="${b.id}"]`).getByRole("button", { name: "Download" }).click()]);
    const path = await dl.path();
    const bytes = readFileSync(path);
    check(bytes.length === b.size, `downloaded ${bytes.length} bytes, archive ${b.size}`);
    check(bytes.includes(Buffer.from("svc-backup-trailer v1")), "the download ends with the trailer");
    check(dl.suggestedFilename() === b.name, `file name ${dl.suggestedFilename()}`);
    await ctx.close();
  });

  await step("backups: restore check of an intact archive shows the steps", async () => {
    const { ctx, page } = await open();
    await toBackups(page);
    const b = await newest();
    await page.locator(`tr[data-id="${b.id}"]`).getByRole("button", { name: "Restore…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("Verified:").waitFor();
    await dialog.getByText(/^svc restore /).waitFor();
    await shot(page, "backup-02-restore-steps");
    await ctx.close();
  });

  await step("backups: a tampered archive is refused, the page says nothing was touched", async () => {
    const b = await newest();
    const file = isAbsolute(b.location) ? b.location : join(s.dir, b.location);
    const data = readFileSync(file);
    data[Math.floor(data.length / 2)] ^= 0x20;
    writeFileSync(file, data);
    const { ctx, page } = await open();
    await toBackups(page);
    await page.locator(`tr[data-id="${b.id}"]`).getByRole("button", { name: "Restore…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("The current data was not touched").waitFor();
    const text = await dialog.innerText();
    check(/2951/.test(text) && /corrupt|partial/.test(text), `refusal shown: ${text}`);
    await shot(page, "backup-03-tampered-refused");
    await ctx.close();
  });

  await step("backups: the page in Simplified Chinese", async () => {
    const { ctx, page } = await open({ width: 1280, height: 800 }, "zh-CN");
    await page.goto(`${s.base}/console/`);
    await page.getByLabel("用户名").fill(OPS.user);
    await page.getByLabel("密码").fill(OPS.pw);
    await page.getByRole("button", { name: "登录" }).click();
    await page.locator("nav#nav").waitFor({ state: "attached" });
    await page.goto(`${s.base}/console/#/backups`);
    await page.getByRole("button", { name: "立即备份" }).waitFor();
    await shot(page, "backup-04-zh");
    await ctx.close();
  });
  expect([]);
}

// Browser tests of the Events page: a dead letter made by the binary's own relay, replayed from
// the page and delivered.
//
// How the dead letter is made (no test hook): scratch() routes e2e.* events through the outbox
// to Redis Streams (kvstore_stream) with max_retries 1. A cron schedule of the built-in
// event.publish job, created and triggered through /api, publishes e2e.order.placed; the stream
// key it goes to holds a plain string, so Redis refuses the relay's XADD (WRONGTYPE), the relay
// forwards the event to svc-dlq.e2e.order.placed and marks the row dead. Once the key is
// removed — the operator fixed the cause — Replay on the page forwards it, and the stream holds
// the event.
import { execFileSync } from "node:child_process";
import { apiClient } from "./lib.mjs";

const TYPE = "e2e.order.placed";
const OPS = { user: "evops", pw: "evops-passphrase-1" };
const READER = { user: "evreader", pw: "evreader-passphrase-1" };

export default async function (h) {
  const { s, step, check, open, shot, signIn, cli, expect } = h;
  const key = `${s.streamPrefix}${TYPE}`;
  const tag = s.streamPrefix.replace(/^svc-|:$/g, "");
  const redis = (...args) => execFileSync("redis-cli", ["-h", s.redis.host, "-p", s.redis.port, ...args], { encoding: "utf8" }).trim();

  const { api, login } = apiClient(s, check);
  const signInAs = async (page, who, zh = false) => {
    if (zh) {
      await page.goto(`${s.base}/console/`);
      await page.getByLabel("用户名").fill(who.user);
      await page.getByLabel("密码").fill(who.pw);
      await page.getByRole("button", { name: "登录" }).click();
    } else await signIn(page, who.user, who.pw);
    await page.locator("nav#nav").waitFor({ state: "attached" });
    await page.goto(`${s.base}/console/#/events`);
  };

  cli(["user", "add", OPS.user, "--roles", "admin", "--password-stdin"], `${OPS.pw}\n`);
  cli(["user", "add", READER.user, "--roles", "events_reader", "--password-stdin"], `${READER.pw}\n`);
  let token = "";
  let dead = null;

  await step("events: the relay dead-letters an event the stream refuses (WRONGTYPE)", async () => {
    token = await login(OPS);
    redis("SET", key, "not a stream");
    let r = await api(token, "sys/cron/schedule", "create", {
      name: "e2e-order",
      jobName: "event.publish",
      trigger: { kind: "once", atUnixMs: Date.now() + 86_400_000 },
      params: { type: TYPE, payload: { order: 42, customer: "Ada" } },
      enabled: true,
    });
    check(r.code === 0, `create schedule: ${JSON.stringify(r)}`);
    // two fires, one after the other: one dead letter to replay, one left for the reader
    let rows = [];
    for (const want of [1, 2]) {
      r = await api(token, "sys/cron/schedule", "trigger_now", { name: "e2e-order" });
      check(r.code === 0, `trigger_now: ${JSON.stringify(r)}`);
      const deadline = Date.now() + 60_000;
      while (rows.length < want && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 500));
        r = await api(token, "sys/event/outbox", "find_page", { status: "dead", eventType: TYPE });
        rows = r.data?.items ?? [];
      }
      check(rows.length === want, `${want} dead outbox rows within 60 s: ${JSON.stringify(r)}`);
    }
    dead = rows[1]; // the older one
    check(/WRONGTYPE/.test(dead.lastError ?? ""), `last error names the refusal: ${dead.lastError}`);
    check(redis("XLEN", `${s.streamPrefix}svc-dlq.${TYPE}`) === "2", "both dead letters went to svc-dlq.<type>");
  });

  await step("events page: outbox counts, the dead letter and its detail", async () => {
    check(dead, "a dead letter exists");
    const { ctx, page } = await open();
    await signInAs(page, OPS);
    await page.getByRole("heading", { name: "Events" }).waitFor();
    const deadCount = page.getByRole("group", { name: "Rows per status" }).getByRole("button", { name: /dead/ });
    check(/^\s*[1-9]/.test(await deadCount.innerText()), `dead count shown: ${await deadCount.innerText()}`);
    // the count filters the list; the filter form narrows by type prefix too
    await deadCount.click();
    await page.getByPlaceholder("Event type (prefix)").fill("e2e.");
    await page.getByRole("button", { name: "Filter" }).click();
    const row = page.locator(`tr[data-event="${dead.eventId}"]`);
    await row.waitFor();
    check((await page.locator("tbody tr[data-row]").count()) === 2, "two dead e2e rows listed");
    check(/WRONGTYPE/.test(await row.innerText()), "the row shows its last error");
    // dates as on every other page: YYYY-MM-DD HH:mm:ss, not the en-US locale's M/D/YYYY
    check(/\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\b/.test(await row.innerText()) && !/\d+\/\d+\/\d{4}/.test(await row.innerText()),
      `the outbox row's date is ISO: ${await row.innerText()}`);
    await shot(page, "events-01-outbox");
    // the bus: transports, routes, consumer groups
    await page.getByRole("tab", { name: "Transports and streams" }).click();
    await page.locator('tr[data-transport="kvstore_stream"]').getByText("enabled").waitFor();
    await page.getByRole("cell", { name: "e2e.*" }).waitFor();
    await page.locator(`tr[data-stream="${s.streamPrefix}svc-dlq.${TYPE}"]`).waitFor();
    await shot(page, "events-02-transports");
    await ctx.close();
  });

  await step("events page: Replay delivers the dead letter once the stream accepts it", async () => {
    check(dead, "a dead letter exists");
    const { ctx, page } = await open();
    await signInAs(page, OPS);
    await page.getByRole("heading", { name: "Events" }).waitFor();
    await page.getByPlaceholder("Event id").fill(dead.eventId);
    await page.getByRole("button", { name: "Filter" }).click();
    const row = page.locator(`tr[data-event="${dead.eventId}"]`);
    await row.getByRole("button", { name: "Details" }).click();
    const dlg = page.getByRole("dialog");
    await dlg.locator('[data-status="dead"]').waitFor();
    check(/"customer": "Ada"/.test(await dlg.locator("pre.sql").last().innerText()), "payload shown");
    await shot(page, "events-03-dead-letter");
    // the operator fixes the cause: the key is removed, the stream can be written again
    redis("DEL", key);
    await dlg.getByRole("button", { name: "Replay" }).click();
    const result = dlg.locator('[data-outcome="delivered"]');
    await result.waitFor();
    await dlg.locator('[data-status="completed"]').waitFor();
    check(!(await dlg.getByRole("button", { name: "Replay" }).isVisible()), "no Replay on a completed row");
    await shot(page, "events-04-replayed");
    await dlg.getByRole("button", { name: "Close" }).click();
    await row.getByText("completed").waitFor();
    // delivered, not re-queued: the row is completed and the event is in its stream
    const r = await api(token, "sys/event/outbox", "get", { id: dead.id });
    check(r.data?.status === "completed" && r.data?.processedAt, `row after replay: ${JSON.stringify(r.data)}`);
    check(redis("XLEN", key) === "1", "the stream holds the replayed event");
    const entry = redis("XRANGE", key, "-", "+");
    check(entry.includes(dead.eventId), `the stream entry is the event ${dead.eventId}: ${entry}`);
    // a second replay changes nothing
    const again = await api(token, "sys/event/outbox", "replay", { id: dead.id });
    check(again.code === 0 && again.data.outcome === "not_dead", `second replay: ${JSON.stringify(again)}`);
    check(redis("XLEN", key) === "1", "still one entry after a second replay");
    await page.getByRole("tab", { name: "Transports and streams" }).click();
    const stream = page.locator(`tr[data-stream="${key}"]`);
    await stream.waitFor();
    check(/\b1\b/.test(await stream.innerText()), `the stream row shows length 1: ${await stream.innerText()}`);
    await ctx.close();
  });

  await step("events page: keyboard, Chinese at phone width, and a reader who may not replay", async () => {
    // keyboard: the Details button of the first row is reached with Tab and opens with Enter
    let { ctx, page } = await open();
    await signInAs(page, OPS);
    await page.locator("tr[data-row]").first().waitFor();
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(() => document.activeElement?.textContent?.trim() === "Details");
    }
    check(reached, "a Details button is reachable with Tab");
    await page.keyboard.press("Enter");
    await page.getByRole("dialog").waitFor();
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
    await ctx.close();

    // a reader: sees the page in Chinese at phone width, no Replay; the server refuses anyway
    ({ ctx, page } = await open({ width: 390, height: 844 }, "zh-CN"));
    await signInAs(page, READER, true);
    await page.getByRole("heading", { name: "事件" }).waitFor();
    await page.getByRole("tab", { name: "传输与流" }).click();
    await page.locator('tr[data-transport="outbox"]').waitFor();
    await shot(page, "events-05-zh-phone");
    await page.getByRole("tab", { name: "发件箱" }).click();
    await page.getByRole("group", { name: "各状态行数" }).getByRole("button", { name: /死信/ }).click();
    await page.locator("tr[data-row]").first().waitFor();
    // nothing but the tables' own scrolling areas is wider than the phone
    const tooWide = () =>
      page.evaluate(() =>
        [...document.querySelectorAll("main *")]
          .filter((e) => !e.closest(".table-wrap") && e.getBoundingClientRect().right > window.innerWidth + 1)
          .map((e) => `${e.tagName.toLowerCase()}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`),
      );
    let wide = await tooWide();
    check(!wide.length, `wider than the phone: ${wide.slice(0, 5)}`);
    await page.locator("tr[data-row]").first().getByRole("button", { name: "详情" }).click();
    const dlg = page.getByRole("dialog");
    await dlg.locator('[data-status="dead"]').waitFor();
    wide = await tooWide();
    check(!wide.length, `dialog wider than the phone: ${wide.slice(0, 5)}`);
    check(!(await dlg.getByRole("button", { name: "重放" }).isVisible()), "no Replay for a reader");
    await dlg.getByText("sys.event.manage").waitFor();
    await shot(page, "events-06-reader");
    await ctx.close();
    const readerToken = await login(READER);
    const r = await api(readerToken, "sys/event/outbox", "replay", { id: dead.id });
    check(r.status === 403 && r.code === 1100, `reader's replay refused: ${r.status}/${r.code}`);
    expect([]);
  });

  await step("events page: Discard removes the other dead letter after a confirmation", async () => {
    const { ctx, page } = await open();
    await signInAs(page, OPS);
    const deadCount = page.getByRole("group", { name: "Rows per status" }).getByRole("button", { name: /dead/ });
    await deadCount.click();
    const row = page.locator("tr[data-row]").first();
    const id = await row.getAttribute("data-row");
    await row.getByRole("button", { name: "Details" }).click();
    const dlg = page.getByRole("dialog");
    await dlg.locator('[data-status="dead"]').waitFor();
    page.once("dialog", (d) => void d.accept());
    await dlg.getByRole("button", { name: "Discard" }).click();
    await dlg.waitFor({ state: "detached" });
    await page.getByText("No outbox rows match.").waitFor();
    check((await deadCount.innerText()).trim().startsWith("0"), `dead count after discard: ${await deadCount.innerText()}`);
    const r = await api(token, "sys/event/outbox", "get", { id });
    check(r.code === 2001, `the discarded row is gone: ${JSON.stringify(r)}`);
    await ctx.close();
  });

  // The Redis keys of this run (streams, sessions, relay) go with it, once the server stopped
  // (a running server makes its consumer groups again).
  process.once("exit", () => {
    const keys = redis("--scan", "--pattern", `*${tag}*`).split("\n").filter(Boolean);
    for (let i = 0; i < keys.length; i += 500) redis("DEL", ...keys.slice(i, i + 500));
  });
}

// Helpers of the console's browser tests: a scratch svc server, its CLI, TOTP codes.
import { spawn, execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, openSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** totp computes the RFC 6238 code (SHA-1, 6 digits, 30 s) of a base32 secret at step. */
export function totp(secret, step = Math.floor(Date.now() / 30000)) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const ch of secret.replace(/=+$/, "").toUpperCase()) bits += alphabet.indexOf(ch).toString(2).padStart(5, "0");
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(step));
  const h = createHmac("sha1", key).update(msg).digest();
  const o = h[h.length - 1] & 0xf;
  return String((h.readUInt32BE(o) & 0x7fffffff) % 1_000_000).padStart(6, "0");
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

/**
 * scratch prepares a working directory with the shipped configuration plus the test's
 * additions (permission-limited roles: viewer, events_reader, useradm, auditor, and staff who start and decide
 * approvals; a password policy, a fast monitor sampler, the outbox
 * relaying to Redis Streams for the events steps).
 */
export async function scratch(root) {
  const dir = mkdtempSync(join(tmpdir(), "svc-console-e2e-"));
  mkdirSync(join(dir, "configs"));
  let cfg = readFileSync(join(root, "configs", "application.toml"), "utf8");
  cfg = cfg.replace('admin = ["*"]', 'admin = ["*"]\nviewer = ["sys.schema.query"]\nevents_reader = ["sys.event.query"]\nstaff = ["approval.instance.start", "approval.task.process", "approval.task.urge"]\nuseradm = ["security.user.*", "security.session.*"]\nauditor = ["sys.audit.query", "security.user.query"]');
  // 60 logins per address and period (default 6): every area's steps sign their users in from
  // this one address; the rate-limit step, run last, still reaches the limit.
  cfg += '\n[svc.security]\nlogin_rate_limit = 60\n';
  cfg += '\n[svc.security.password_policy]\nmin_length = 12\n\n[svc.monitor]\nsample_interval = "2s"\nsample_duration = "1s"\n\n[svc.integration.log]\nmode = "all"\n';
  // The events steps need a dead letter made by the binary's own relay: the outbox relays to
  // Redis Streams (kvstore_stream) and gives up after one failed forward, so a stream key that
  // Redis refuses to append to (a plain string: WRONGTYPE) dead-letters the event. Redis is the
  // one of scripts/services.sh (SVC_TEST_REDIS_ADDR, else 127.0.0.1:6379); the app name and the
  // stream prefix are unique, so runs sharing that Redis do not see each other's keys.
  const tag = `e2e${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const [redisHost, redisPort] = (process.env.SVC_TEST_REDIS_ADDR || "127.0.0.1:6379").split(":");
  const streamPrefix = `svc-${tag}:`;
  cfg = cfg.replace('name = "svc-app"', `name = "svc-${tag}"`);
  cfg = cfg.replace('sink = "memory"', 'sink = "kvstore_stream"\nmax_retries = 1');
  cfg = cfg.replaceAll('transports = ["outbox", "memory"]', 'transports = ["outbox", "kvstore_stream"]');
  cfg += `\n[svc.kvstore]\nenabled = true\nhost = "${redisHost}"\nport = ${redisPort}\n`;
  cfg += `\n[svc.event.transports.kvstore_stream]\nenabled = true\nstream_prefix = "${streamPrefix}"\nblock_timeout = "1s"\n`;
  cfg += '\n[[svc.event.routing]]\npattern = "e2e.*"\ntransports = ["outbox", "kvstore_stream"]\n';
  writeFileSync(join(dir, "configs", "application.toml"), cfg);
  const port = await freePort();
  // Only what the server needs: the caller's SVC_* variables must not leak in.
  const env = { PATH: process.env.PATH, HOME: dir, TZ: "UTC", SVC_APP_PORT: String(port) };
  const redis = { host: redisHost, port: redisPort };
  return { dir, port, env, base: `http://127.0.0.1:${port}`, redis, streamPrefix };
}

/** cli runs `svc ARGS` in the scratch directory with stdin and answers its stdout. */
export function cli(bin, s, args, input = "") {
  return execFileSync(bin, args, { cwd: s.dir, env: s.env, input, encoding: "utf8" });
}

/** serve starts `svc serve` and waits until /readyz answers ready. */
export async function serve(bin, s) {
  const log = openSync(join(s.dir, "svc.log"), "a");
  const proc = spawn(bin, ["serve"], { cwd: s.dir, env: s.env, stdio: ["ignore", log, log] });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) break;
    try {
      const r = await fetch(`${s.base}/readyz`);
      if (r.ok) return proc;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  proc.kill("SIGKILL");
  throw new Error(`svc serve did not become ready:\n${readFileSync(join(s.dir, "svc.log"), "utf8")}`);
}

/**
 * apiClient calls the scratch server's /api from node: api(token, resource, action, params, meta)
 * answers the envelope with the HTTP status; login(who) answers an access token of the
 * password login of { user, pw } (users without TOTP).
 */
export function apiClient(s, check) {
  const api = async (token, resource, action, params = {}, meta) => {
    const r = await fetch(`${s.base}/api`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ resource, action, version: "v1", params, ...(meta ? { meta } : {}) }),
    });
    return { status: r.status, ...(await r.json()) };
  };
  const login = async ({ user, pw }) => {
    const r = await api(null, "security/auth", "login", { type: "password", principal: user, credentials: pw });
    check(r.code === 0 && r.data?.tokens?.accessToken, `login ${user}: ${JSON.stringify(r)}`);
    return r.data.tokens.accessToken;
  };
  return { api, login };
}

/** signInZh signs user in on the console at base with the sign-in page in Chinese (the
 * context's locale is zh-CN) and waits for the menu. */
export async function signInZh(page, base, user, password) {
  await page.goto(`${base}/console/`);
  await page.getByLabel("用户名").fill(user);
  await page.getByLabel("密码").fill(password);
  await page.getByRole("button", { name: "登录" }).click();
  await page.locator("nav#nav").waitFor({ state: "attached" });
}

/** oneApproverFlow is a flow definition in the designer's shape: start → one approval by the
 * user approver → end. */
export const oneApproverFlow = (approver) => ({
  nodes: [
    { id: "s", kind: "start", position: { x: 0, y: 0 }, data: { name: "Submit" } },
    { id: "a", kind: "approval", position: { x: 0, y: 120 }, data: { name: "Manager", assignees: [{ kind: "user", ids: [approver], sortOrder: 0 }] } },
    { id: "e", kind: "end", position: { x: 0, y: 240 }, data: { name: "Done" } },
  ],
  edges: [
    { id: "e1", source: "s", target: "a" },
    { id: "e2", source: "a", target: "e" },
  ],
});

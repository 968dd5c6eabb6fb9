// The few browser globals the console's modules read when they load (api.ts the origin and the
// stored tokens, i18n.ts the language), for unit tests that run in Node.
import { beforeEach } from "vitest";

class MemoryStorage {
  private m = new Map<string, string>();
  get length() {
    return this.m.size;
  }
  clear() {
    this.m.clear();
  }
  getItem(k: string) {
    return this.m.has(k) ? this.m.get(k)! : null;
  }
  key(i: number) {
    return [...this.m.keys()][i] ?? null;
  }
  removeItem(k: string) {
    this.m.delete(k);
  }
  setItem(k: string, v: string) {
    this.m.set(k, String(v));
  }
}

const globals: Record<string, unknown> = {
  localStorage: new MemoryStorage(),
  window: { location: { origin: "http://console.test", hash: "" } },
  document: { documentElement: { lang: "" } },
  navigator: { language: "en-US", languages: ["en-US"] },
};
// defineProperty: newer Node versions have a navigator (and localStorage) without a setter.
for (const [k, v] of Object.entries(globals)) Object.defineProperty(globalThis, k, { value: v, configurable: true, writable: true });

beforeEach(() => {
  (globals.localStorage as MemoryStorage).clear();
});

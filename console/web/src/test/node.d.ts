// The few Node.js functions unit tests use to read the repository's fixtures (vitest runs in
// Node; the console's own code never imports these). No @types/node: the console needs none.
declare module "node:fs" {
  export function readFileSync(path: string, encoding: "utf8"): string;
  export function readdirSync(path: string): string[];
  export function statSync(path: string): { isDirectory(): boolean };
}
declare module "node:path" {
  export function join(...parts: string[]): string;
}

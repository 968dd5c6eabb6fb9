// Builds one library of the standard bundle with esbuild (called by gen.sh): an IIFE whose
// value is the library, minified, lowered to ES2017 for goja. Zod's catalog of every locale is
// replaced by the two the runtime offers (en, zh-CN).
import { build } from "esbuild";
import path from "node:path";

const [lib, outfile] = process.argv.slice(2);
const onlyTwoLocales = {
  name: "zod-locales",
  setup(b) {
    b.onResolve({ filter: /locales\/index\.js$/ }, args =>
      args.importer.includes(`${path.sep}zod${path.sep}`) ? { path: path.resolve("locales-zod.js") } : undefined);
  }
};
await build({
  entryPoints: [`entry-${lib}.js`], bundle: true, minify: true, format: "iife", globalName: "__lib",
  target: "es2017", legalComments: "none", logLevel: "warning", outfile, plugins: [onlyTwoLocales]
});

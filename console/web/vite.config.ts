// Build of the svc console. The output goes to ../dist, which the Go package console embeds.
// Reproducible: content-hashed names, no timestamps, no source maps; scripts/console.sh check
// rebuilds into a temporary directory and compares.
import { defineConfig, type Plugin } from "vite";

// The server writes its configured console path (with a trailing slash) over
// %SVC_CONSOLE_BASE% when it serves index.html, so the entry's URLs stay right on any
// address under the prefix. Chunks import each other relatively (base "./").
const consoleBase: Plugin = {
  name: "svc-console-base",
  apply: "build",
  enforce: "post",
  transformIndexHtml: {
    order: "post",
    handler: (html) => html.replace(/(src|href)="\.\//g, '$1="%SVC_CONSOLE_BASE%'),
  },
};

export default defineConfig({
  // Relative asset URLs: the console is served under a configurable prefix (svc.console.path).
  base: "./",
  plugins: [consoleBase],
  esbuild: { jsx: "automatic", jsxImportSource: "preact", legalComments: "none" },
  build: {
    outDir: process.env.CONSOLE_OUT_DIR || "../dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // No inline script anywhere: the polyfill would be injected inline-free, but modern
    // browsers need none.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    cssCodeSplit: true,
    reportCompressedSize: true,
    chunkSizeWarningLimit: 250,
  },
});

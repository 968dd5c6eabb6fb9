// Package console is the operators' web console of svc (issue #35; ARCHITECTURE.md "The
// console"): its sources (web/, Preact + TypeScript built by Vite), its committed build (dist/,
// made by scripts/console.sh build) and this Go package, which embeds the build and serves it.
// The console is a client of the public /api like any other: it has no endpoint of its own, and
// what a person sees and may do is what their permission tokens allow (docs/console.md maps the
// pages to the tokens).
//
// # Routes (only while svc.console.enabled, default true)
//
//	GET <svc.console.path>        308 to <path>/ (query kept)
//	GET <svc.console.path>/…      the build; HEAD too
//
// Under <path>/: a file of the build is served as it is; any other page route answers
// index.html (the single-page application's routes). A page route is a decoded path whose
// segments are all plain names (a trailing slash allowed): not under assets/ (an unknown name
// there is 404, so a stale page never gets HTML for a script), no "." or ".." segment however
// encoded, no empty segment, no control character (NUL included) or backslash, not ending in
// index.html; everything else answers 404. index.html has every BasePlaceholder
// ("%SVC_CONSOLE_BASE%") replaced by the path with a trailing slash, so the build works under
// any prefix. Disabled, nothing is registered and the path answers the server's 404 envelope.
//
// # Headers
//
//   - Cache-Control: public, max-age=31536000, immutable for assets/ (content-hashed names);
//     no-cache for index.html and the other files. Every response has a strong ETag per
//     encoding and answers If-None-Match with 304.
//   - Content-Encoding: x.br and x.gz beside a file x in the build are its precompressed
//     variants, chosen by Accept-Encoding (br first) with Vary: Accept-Encoding; a text file of
//     at least 1 KiB without a .gz variant is gzipped once when the module is built. The
//     server's own response compression leaves these responses alone (they carry an ETag).
//   - Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self';
//     img-src 'self' data:; font-src 'self'; object-src 'none'; base-uri 'none'; form-action
//     'self'; frame-ancestors 'none'; connect-src 'self' ws://<host> wss://<host> (the request's
//     Host when it is a plain host[:port]); no inline script or style is allowed, so the build
//     has none.
//   - X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer, X-Frame-Options: DENY,
//     Cross-Origin-Opener-Policy and Cross-Origin-Resource-Policy: same-origin.
//
// # Configuration keys
//
// svc.console.enabled (default true), svc.console.path (default /console; a clean absolute
// path other than / and outside /api, else startup error config.ErrInvalidConsolePath).
//
// Tables: none. Workers: none. Resources: none (the operations the console calls belong to
// their modules: security/user, security/session, security/department, sys/storage/file
// find_page and delete, sys/monitor get_readiness were added for it).
package console

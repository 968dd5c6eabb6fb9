#!/bin/sh
# Regenerates the standard bundle of integration scripts (wire-integration §8): dayjs,
# BigNumber, fxp (fast-xml-parser: XMLParser, XMLBuilder, XMLValidator), radashi and z (Zod,
# English and Chinese messages, Chinese by default), one minified file per library in
# integration/jslib/std/, embedded in the binary and evaluated only when a script first touches
# the global. Needs node and npm with access to the npm registry; versions are pinned in
# package.json and, with every transitive package and its integrity hash, in package-lock.json
# (after changing a version: npm install --package-lock-only in this directory).
#
#   sh integration/jsbundle/gen.sh
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../jslib/std"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$here/build.mjs" "$here/locales-zod.js" "$here"/entry-*.js "$work/"
cd "$work"
npm ci --no-audit --no-fund --silent   # exactly the locked versions and integrity hashes
mkdir -p "$out"
for lib in dayjs bignumber fxp radashi zod; do
	# Each file is one expression: an IIFE whose value is the library (goja runs ES2017 well;
	# newer syntax is lowered).
	node build.mjs "$lib" "$lib.tmp.js"
	{ printf '(function(){'; cat "$lib.tmp.js"; printf ';return __lib.default;})()\n'; } > "$out/$lib.js"
done
ls -l "$out"

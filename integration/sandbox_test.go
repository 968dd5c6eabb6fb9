package integration

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// TestSandboxKeepsSpecBehaviour: a run in a worker answers what a plain goja runtime answers
// (the oracle), names, lengths and instanceof included: the result crosses the protocol intact.
func TestSandboxKeepsSpecBehaviour(t *testing.T) {
	t.Parallel()
	e := testEngine(t)
	for _, expr := range []string{
		"Array(3).fill(0)", "new Array(2, 3)", "Array.from({length: 3}, (_, i) => i * 2)", "Array.from('héllo')",
		"Array.from(new Set([1, 1, 2]))", "Array.of(7, 8)", "[1, [2, [3, [4]]]].flat(Infinity)", "[1, [2, [3]]].flat()",
		"[[1], [2]].flatMap(x => x)", "[1, 2, 3].join('-')", "[1, [2, 3], null, undefined, 'x'].join()", "String([1, [2, 3]])",
		"[1, 2].concat([3], 4, [[5]])", "[3, 1, 2].sort()", "[1, 2, 3].map(x => x + 1).filter(x => x > 2)",
		"[1, 2, 3].splice(1, 1, 'a', 'b')", "[...[1, 2], ...'ab']", "[...new Array(3)].length", "[1, 2, 3].toReversed()",
		"Array.isArray([]) && [] instanceof Array && !({} instanceof Array)", "[].constructor === Array && Array.prototype.constructor === Array",
		"[Array.name, Array.length, [].map.name, [].map.length, typeof Array, String([].join).includes('native')]",
		"(() => { class A extends Array {} const a = new A(3); return [a instanceof A, a instanceof Array, a.length, A.from([1]) instanceof A] })()",
		"'ab'.repeat(3)", "'5'.padStart(3, '0') + '5'.padEnd(3, '*')", "'a'.concat('b', 1, null)",
		"'aXbX'.replaceAll('X', '[$&]')", "'aXbX'.replace('X', () => '-')", "'abc'.replace(/b/g, x => x.toUpperCase())",
		"'a1b2'.replace(/\\d/g, \"$'\")", "'a,b,,c'.split(',')", "'a,b,c'.split(',', 2)", "'abc'.split('')", "'a-b_c'.split(/[-_]/)",
		"'aaa'.match(/a/g)", "'aaa'.match(/a/)[0]", "[...'a1b2'.matchAll(/\\d/g)].map(m => m[0])", "Object.keys('abc')", "Object.entries([7, 8])",
		"[new Uint8Array([1, 2, 300]), new Float64Array(2).length, new ArrayBuffer(8).byteLength, new Int16Array(new ArrayBuffer(8), 2).length]",
		"[Uint8Array.from([1, 2]) instanceof Uint8Array, new Uint8Array(2).map(x => x + 1), new Uint8Array([5, 6]).slice(1), Uint8Array.name]",
		"new Uint8Array([1, 2]).constructor === Uint8Array && new ArrayBuffer(1) instanceof ArrayBuffer",
		"Math.max.apply(null, [1, 5, 2])", "Reflect.apply(Math.min, null, [4, 2])", "Reflect.construct(Date, [0]).getTime()",
		"JSON.stringify({a: [1, {b: 'x\"y\\n'}], c: null, d: undefined, e: () => 1})", "JSON.stringify({a: [1, {b: 2}]}, null, 2)",
		"JSON.stringify({a: 1, b: {c: 2, a: 3}, d: 4}, ['d', 'a', 'b'])", "JSON.stringify({a: 1, b: 'x'}, (k, v) => typeof v === 'number' ? v * 2 : v)",
		"JSON.stringify([new Number(3), new String('s'), new Boolean(false), NaN, -0, 1e21])", "JSON.stringify({toJSON() { return {x: 1} }})",
		"JSON.stringify([[]], null, '--')", "JSON.stringify(new Date(0))", "JSON.stringify('plain')", "JSON.stringify(undefined) === undefined",
		"JSON.stringify({a: [{}, []]}, null, 4)", "JSON.stringify(new Map([[1, 2]]))",
		"[typeof Uint8Array, typeof JSON.parse, typeof Reflect.apply, 'Uint8Array' in globalThis, globalThis.JSON === JSON]",
		"[new (new Uint8Array(1).constructor)(2).length, typeof globalThis.globalThis, globalThis.globalThis === globalThis]",
		"[...'a1b2'.matchAll('b')].length", "Reflect.ownKeys(new Int8Array(2))",
	} {
		t.Run(expr, func(t *testing.T) {
			want := oracle(t, expr)
			got, kind, err := evalBody(t, e, 5*time.Second, "return JSON.stringify("+expr+")")
			if err != nil {
				t.Fatalf("kind %s: %v", kind, err)
			}
			if got != want {
				t.Errorf("guarded = %s, want %s", got, want)
			}
		})
	}
}

// oracle is JSON.stringify(JSON.stringify(expr)) in a plain runtime, as runBody answers it.
func oracle(t *testing.T, expr string) string {
	t.Helper()
	v, err := goja.New().RunString("JSON.stringify(JSON.stringify(" + expr + "))")
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	return v.String()
}

// hostileAllocations are single builtin calls (or one native step) that, unguarded, allocate
// gigabytes before the watchdog can look (issue #31 item 7).
var hostileAllocations = []struct{ name, body string }{
	{"Array(3e7).fill", "return Array(3e7).fill({}).length"},
	{"length setter then fill", "const a = []; a.length = 3e7; return a.fill(0).length"},
	{"fill on an array-like", "return Array.prototype.fill.call({length: 3e7}, 0).length"},
	{"Array.from length", "return Array.from({length: 3e7}).length"},
	{"spread of a sparse array", "const a = []; a.length = 3e7; return [...a].length"},
	{"join of a sparse array", "const a = []; a.length = 1e9; return a.join('xx').length"},
	{"toString of a sparse array", "const a = []; a.length = 1e9; return String(a).length"},
	{"join of shared strings", "const s = 'x'.repeat(1 << 20); return Array(1000).fill(s).join('').length"},
	{"concat of shared arrays", "const a = Array(1 << 20).fill(0); return [].concat(a, a, a, a, a, a, a, a, a).length"},
	{"flat of a DAG", "let x = [1]; for (let i = 0; i < 30; i++) x = [x, x]; return x.flat(Infinity).length"},
	{"toReversed of a sparse array", "const a = []; a.length = 3e7; return a.toReversed().length"},
	{"apply of an array-like", "return Math.max.apply(null, {length: 3e7})"},
	{"Reflect.apply", "return Reflect.apply(Math.max, null, {length: 3e7})"},
	{"Uint8Array(1.5e9)", "return new Uint8Array(1.5e9).length"},
	{"Float64Array", "return new Float64Array(2e8).length"},
	{"ArrayBuffer", "return new ArrayBuffer(1.5e9).byteLength"},
	{"ArrayBuffer via valueOf", "return new ArrayBuffer({valueOf() { return 1.5e9 }}).byteLength"},
	{"Uint8Array.from", "return Uint8Array.from({length: 1.5e9}).length"},
	{"typed array of an array-like", "return new Int32Array({length: 3e8}).length"},
	{"repeat", "return 'x'.repeat(1 << 30).length"},
	{"padEnd", "return ''.padEnd(1 << 30, 'x').length"},
	{"repeat of an object", "return String.prototype.repeat.call({toString() { return 'xxxxxxxx' }}, 1 << 28).length"},
	{"replaceAll quadratic", "const s = 'x'.repeat(1 << 16); return s.replaceAll('', s).length"},
	{"replace suffix pattern", "const s = 'x'.repeat(1 << 16); return s.replace(/x/g, \"$'\").length"},
	{"replace by a function", "const s = 'x'.repeat(1 << 16), big = 'y'.repeat(1 << 16); return s.replace(/x/g, () => big).length"},
	{"split into characters", "const s = 'x'.repeat(1 << 23); return s.split('').length"},
	{"JSON.stringify of a DAG", "let x = ['x'.repeat(1000)]; for (let i = 0; i < 25; i++) x = [x, x]; return JSON.stringify(x).length"},
	{"JSON.stringify indentation", "let x = []; for (let i = 0; i < 5000; i++) x = [x, x]; return JSON.stringify(x, null, 10).length"},
	{"typed array through globalThis", "return new globalThis['Uint8' + 'Array'](1.5e9).length"},
	{"typed array through its constructor", "return new (new Uint8Array(1).constructor)(1.5e9).length"},
	{"Array through a literal", "return [].constructor(3e7).fill(0).length"},
	{"Object.keys of a string through a literal", "return ({}).constructor.keys('x'.repeat(1 << 23)).length"},
	{"matchAll with a string", "return [...'x'.repeat(1 << 23).matchAll('x')].length"},
	{"match global", "return 'x'.repeat(1 << 23).match(/x/g).length"},
	{"result of a DAG", "let x = ['x'.repeat(1000)]; for (let i = 0; i < 25; i++) x = [x, x]; return x"},
}

// ConcatenationForms are the string concatenation forms of issue #42 item 4, each doubling a
// string without bound: the VM's own operators (+, +=, template literals) and the builtins
// (concat, repeat, join, padStart). The gateway test delivers each too.
var ConcatenationForms = []struct{ Name, Body string }{
	{"s += s", "let s = 'x'; for (;;) s += s"},
	{"s = s + s", "let s = 'xy'; for (let i = 0; i < 64; i++) s = s + s; return s.length"},
	{"template literal", "let s = 'x'; for (;;) s = `${s}${s}`"},
	{"concat", "let s = 'x'; for (;;) s = s.concat(s)"},
	{"repeat", "let s = 'x'; for (;;) s = s.repeat(2)"},
	{"join", "let s = 'x'; for (;;) s = [s, s].join('')"},
	{"padStart", "let s = 'x'; for (;;) s = s.padStart(s.length * 2, s)"},
}

// hostileMemory are the ways a script can grow a value without bound (issue #42 item 4),
// which no list of wrapped builtins covers: every concatenation form, then growth through
// other values.
var hostileMemory = append(concatenation(), []struct{ name, body string }{
	{"JSON.stringify of a growing object", "let o = {a: 'x'}; for (;;) o = {a: JSON.stringify(o), b: JSON.stringify(o)}"},
	{"push of strings", "const a = []; for (let i = 0; ; i++) a.push('item ' + i)"},
	{"Array(1e9).join", "return Array(1e9).join('x').length"},
	{"string concatenation kept live", "let s = 'x'.repeat(1 << 20); const keep = []; for (;;) { s += s; keep.push(s) }"},
}...)

// concatenation is ConcatenationForms as hostile cases.
func concatenation() []struct{ name, body string } {
	out := make([]struct{ name, body string }, len(ConcatenationForms))
	for i, c := range ConcatenationForms {
		out[i] = struct{ name, body string }{c.Name, c.Body}
	}
	return out
}

// testMemoryLimit is the workers' memory limit in the hostile tests: small, so a case reaches
// it quickly (under the race detector the worker's data segment is larger, worker_race.go).
const testMemoryLimit = 128 << 20

// TestSandboxHostileMemory: every hostile allocation — the single native calls that once
// needed a wrapped builtin and every concatenation form — ends its run with kind script at the
// worker's memory limit (or the engine's own RangeError), the server's anonymous memory stays
// within 64 MiB of what it was before, and a benign script runs right after it.
func TestSandboxHostileMemory(t *testing.T) {
	e := NewEngine(Limits{MemoryLimit: testMemoryLimit, Concurrency: 1, Worker: TestWorker}, config.ScriptCache{},
		slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	t.Cleanup(e.Close)
	cases := append(append([]struct{ name, body string }(nil), hostileMemory...), hostileAllocations...)
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			base := anonMemory(t)
			stop := peakAnon(t)
			_, kind, err := evalBody(t, e, 60*time.Second, tt.body)
			peak := stop()
			re, _ := rpc.AsError(err)
			if kind != KindScript || re == nil ||
				!strings.Contains(re.Args["detail"], "memory limit exceeded") && !strings.Contains(re.Args["detail"], "RangeError") {
				t.Errorf("kind %q, err %v %v; want script, memory limit exceeded", kind, err, re.Args)
			}
			if peak > base+64<<20 {
				t.Errorf("server memory peaked at %d MiB from %d MiB, want at most 64 MiB more", peak>>20, base>>20)
			}
			if out, _, err := evalBody(t, e, 10*time.Second, "return [1, 2, 3].map(x => x * 2).join()"); err != nil || out != `"2,4,6"` {
				t.Errorf("benign script after it: %s %v", out, err)
			}
		})
	}
}

// TestSandboxCatchable: an error the engine throws for a size it refuses is an ordinary
// exception the script may catch.
func TestSandboxCatchable(t *testing.T) {
	t.Parallel()
	out, kind, err := evalBody(t, testEngine(t), 5*time.Second,
		"try { new Array(-1) } catch (e) { return e instanceof RangeError }")
	if err != nil || out != "true" {
		t.Errorf("caught: %s %s %v, want true", out, kind, err)
	}
}

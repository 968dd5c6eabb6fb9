package svc_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// deviceAllowed are the files of the module that may use a memory or safety device (see
// deviceUses), each with the device and why. It mirrors docs/architecture.md, "Performance
// bypasses" and "Named devices": TestDeviceAllowListIsDocumented holds every entry to a mention
// there. Anything else that needs one must be named there first, with its measured gain.
var deviceAllowed = map[string]string{
	// A security boundary, not a speed-up: SQLite's read-only connection is opened and its
	// statements checked with SQLITE_PREPARE / sqlite3_stmt_readonly through the C API.
	"db/readonly_sqlite.go": "unsafe",
	// A measurement tool, not linked into the binary: it collects before reading the heap.
	"bench/push/server/main.go": "runtime.GC",
}

// measuringInTests are the devices a _test.go file may use: a test that measures the heap
// collects first so that its reading is the live heap, not the garbage of earlier tests.
var measuringInTests = []string{"runtime.GC", "debug.FreeOSMemory"}

// TestNoUnnamedDevices (issue #43): no Go file of the module (the root module's tree: nested
// modules under tools/ and bench/ are their own) imports unsafe, maps memory itself
// (syscall.Mmap, unix.Mmap), advises the kernel on its pages (any madvise name: Madvise,
// MADV_*, SYS_MADVISE), starts a collection or returns memory by hand (runtime.GC,
// debug.FreeOSMemory), changes the collector's target (debug.SetGCPercent) or reaches into
// another package with //go:linkname, except the files of deviceAllowed, for the device
// named there. Test files may collect before they measure (measuringInTests).
func TestNoUnnamedDevices(t *testing.T) {
	t.Parallel()
	var found []string
	used := map[string]bool{}
	walkModuleGoFiles(t, func(path string, fset *token.FileSet, f *ast.File) {
		for _, d := range deviceUses(fset, f) {
			switch {
			case deviceAllowed[path] == d.device:
				used[path] = true
			case strings.HasSuffix(path, "_test.go") && slices.Contains(measuringInTests, d.device):
			default:
				found = append(found, fmt.Sprintf("%s: %s", d.pos, d.device))
			}
		}
	})
	if len(found) > 0 {
		t.Errorf("devices outside the allow-list (remove them, or name them in docs/architecture.md "+
			"\"Performance bypasses\" with a measured gain of at least 10 %% and add them to deviceAllowed):\n%s",
			strings.Join(found, "\n"))
	}
	for path, device := range deviceAllowed {
		if !used[path] {
			t.Errorf("deviceAllowed[%q] = %q, but the file does not use it: drop the entry", path, device)
		}
	}
}

// TestDeviceAllowListIsDocumented: every file deviceAllowed lets use a device is named in
// docs/architecture.md's sections on bypasses and devices, so the list users read and the list
// the test enforces cannot drift apart.
func TestDeviceAllowListIsDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Performance bypasses")
	if start < 0 {
		t.Fatal(`docs/architecture.md has no "## Performance bypasses" section`)
	}
	section := doc[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	for path := range deviceAllowed {
		if !strings.Contains(section, "`"+path+"`") {
			t.Errorf("deviceAllowed names %s, which docs/architecture.md \"Performance bypasses\" does not list", path)
		}
	}
}

// TestDeviceUses holds the detector to what it must catch, whatever the import's local name.
func TestDeviceUses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      []string
	}{
		{"unsafe import", `import "unsafe"; var _ = unsafe.Sizeof(0)`, []string{"unsafe"}},
		{"renamed runtime", `import rt "runtime"; func f() { rt.GC() }`, []string{"runtime.GC"}},
		{"debug", `import "runtime/debug"; func f() { debug.FreeOSMemory(); debug.SetGCPercent(400) }`,
			[]string{"debug.FreeOSMemory", "debug.SetGCPercent"}},
		{"mmap", `import "syscall"; func f() { syscall.Mmap(-1, 0, 1, 0, 0) }`, []string{"syscall.Mmap"}},
		{"x/sys mmap", `import "golang.org/x/sys/unix"; func f() { unix.Mmap(-1, 0, 1, 0, 0) }`, []string{"unix.Mmap"}},
		{"madvise names", `import "syscall"; func f() { syscall.Madvise(nil, syscall.MADV_DONTNEED); _ = syscall.SYS_MADVISE }`,
			[]string{"madvise", "madvise", "madvise"}},
		{"linkname", "import _ \"unsafe\"\n//go:linkname gc runtime.GC\nfunc gc()", []string{"unsafe", "go:linkname"}},
		{"the memory limit is not a device", `import "runtime/debug"; func f() { debug.SetMemoryLimit(1) }`, nil},
		{"a local GC is not runtime's", `type r struct{}; func (r) GC() {}; func f() { var runtime r; runtime.GC() }`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package x\n"+tt.src, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range deviceUses(fset, f) {
				got = append(got, d.device)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("deviceUses = %q, want %q", got, tt.want)
			}
		})
	}
}

// device is one use of a device in a file.
type device struct {
	pos    token.Position
	device string // "unsafe", "runtime.GC", "syscall.Mmap", "madvise", "go:linkname", ...
}

// deviceFuncs are the banned functions by import path.
var deviceFuncs = map[string][]string{
	"runtime":               {"GC"},
	"runtime/debug":         {"FreeOSMemory", "SetGCPercent"},
	"syscall":               {"Mmap"},
	"golang.org/x/sys/unix": {"Mmap"},
}

// deviceUses lists the devices f uses: an import of unsafe, a reference to a function of
// deviceFuncs through its package's import name (a local variable of the same name in a file
// that imports the package is reported too: failing safe beats resolving scopes), any
// identifier or selector naming madvise, and a //go:linkname directive.
func deviceUses(fset *token.FileSet, f *ast.File) []device {
	var out []device
	add := func(p token.Pos, what string) { out = append(out, device{fset.Position(p), what}) }
	imports := map[string]string{} // local name → path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if path == "unsafe" {
			add(imp.Pos(), "unsafe")
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = path
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if strings.Contains(strings.ToLower(n.Sel.Name), "madv") {
				add(n.Pos(), "madvise")
				return false
			}
			id, ok := n.X.(*ast.Ident)
			if !ok {
				return true
			}
			if path, ok := imports[id.Name]; ok && slices.Contains(deviceFuncs[path], n.Sel.Name) {
				add(n.Pos(), path[strings.LastIndex(path, "/")+1:]+"."+n.Sel.Name)
			}
		case *ast.Ident:
			if strings.Contains(strings.ToLower(n.Name), "madv") {
				add(n.Pos(), "madvise")
			}
		}
		return true
	})
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:linkname") {
				add(c.Pos(), "go:linkname")
			}
		}
	}
	return out
}

// walkModuleGoFiles parses every Go file of the root module, tests included (testdata, hidden
// directories, node_modules and nested modules left out), and calls visit with its
// slash-separated path.
func walkModuleGoFiles(t *testing.T, visit func(path string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "." {
				return nil
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		visit(filepath.ToSlash(path), fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

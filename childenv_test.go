package svc_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneReaderOfTheEnvironment (issue #48 item 5): a child process that the suite, a benchmark
// or the fault harness starts gets only the configuration its starter means to give it, so the
// caller's exported SVC_APP_PORT (or any SVC_* key) never reaches it. That holds by construction
// when the whole environment is read in one place, testservice.ChildEnv, which drops the
// caller's SVC_* configuration: no other Go file of the module, tests included, calls
// os.Environ.
func TestOneReaderOfTheEnvironment(t *testing.T) {
	t.Parallel()
	const reader = "internal/testservice/env.go"
	var found []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || filepath.ToSlash(path) == reader {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		osName := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"os"` {
				osName = "os"
				if imp.Name != nil {
					osName = imp.Name.Name
				}
			}
		}
		if osName == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Environ" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == osName {
					found = append(found, fset.Position(sel.Pos()).String())
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("os.Environ outside %s (use svctest.ChildEnv or testservice.ChildEnv for a child's environment):\n  %s",
			reader, strings.Join(found, "\n  "))
	}
}

package svc_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dialectFree are the directories whose Go files may name a database dialect, and why: db owns
// dialect policy; config declares the data source kinds; svctest and internal/testservice pick
// the databases tests run on; bench's programs pick the database to measure. Every other
// package reaches dialect differences through db (issue #32 item 4).
var dialectFree = []string{"db", "config", "svctest", "internal/testservice", "bench"}

// dialectDrivers are the import paths of the drivers and bun's dialects: their error types,
// connections and dialect names are db's business.
var dialectDrivers = []string{
	"github.com/jackc/pgx", "github.com/go-sql-driver/mysql", "modernc.org/sqlite",
	"github.com/uptrace/bun/dialect", "github.com/uptrace/bun/driver",
}

// TestDialectPolicyLivesInDB (issue #32 item 4): no Go file outside dialectFree (tests aside)
// branches on the database kind. It fails on a reference to config.Postgres, config.MySQL or
// config.SQLite, a data source kind written as a string ("postgres", "mysql", "sqlite"), an
// isolation level (sql.Level*) or sql.TxOptions literal (db.DB.InTx owns isolation), a locking
// clause (bun's For, or FOR UPDATE / SKIP LOCKED / LOCK IN SHARE MODE in a string; use
// db.DB.ForUpdate and ForUpdateSkipLocked), a call of bun's RunInTx (it bypasses db.DB.InTx's
// isolation and SQLite writer lock), a call of bun's Dialect() (its name is a dialect check), and
// an import of a driver or bun dialect package.
func TestDialectPolicyLivesInDB(t *testing.T) {
	t.Parallel()
	var found []string
	walkGoFiles(t, func(dir string) bool { return slices.Contains(dialectFree, dir) }, func(fset *token.FileSet, f *ast.File) {
		found = append(found, dialectBranches(fset, f)...)
	})
	if len(found) > 0 {
		t.Errorf("dialect branches outside db (use db's helpers; db/doc.go \"Dialect policy\"):\n%s", strings.Join(found, "\n"))
	}
}

// walkGoFiles parses every Go file of the module but tests, testdata and hidden directories,
// and the directories (slash-separated paths) skip names, and calls visit with each.
func walkGoFiles(t *testing.T, skip func(dir string) bool, visit func(fset *token.FileSet, f *ast.File)) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || skip(filepath.ToSlash(path))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		visit(fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// dialectBranches lists, as "file:line: what", the dialect references of f.
func dialectBranches(fset *token.FileSet, f *ast.File) []string {
	var out []string
	report := func(n ast.Node, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
	}
	local := map[string]string{} // import name → path, for config and database/sql
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		for _, drv := range dialectDrivers {
			if path == drv || strings.HasPrefix(path, drv+"/") {
				report(imp, "imports %s", path)
			}
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		local[name] = path
	}
	var fn string // the function being inspected
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			fn = n.Name.Name
		case *ast.SelectorExpr:
			pkg, ok := n.X.(*ast.Ident)
			if !ok {
				return true
			}
			switch local[pkg.Name] {
			case "github.com/svc-framework/svc/config":
				if n.Sel.Name == "Postgres" || n.Sel.Name == "MySQL" || n.Sel.Name == "SQLite" {
					report(n, "config.%s", n.Sel.Name)
				}
			case "database/sql":
				if strings.HasPrefix(n.Sel.Name, "Level") {
					report(n, "isolation level sql.%s", n.Sel.Name)
				}
			}
		case *ast.CompositeLit:
			if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "TxOptions" {
				if pkg, ok := sel.X.(*ast.Ident); ok && local[pkg.Name] == "database/sql" {
					report(n, "sql.TxOptions literal")
				}
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				switch {
				case sel.Sel.Name == "Dialect" && len(n.Args) == 0:
					report(n, "calls Dialect()")
				case sel.Sel.Name == "RunInTx" && len(n.Args) == 3 && fn != "RunInTx" && !isPackage(sel.X, local):
					// bun's runner with its own options; a RunInTx method that delegates to the
					// one it wraps (a bun.IDB wrapper) chooses nothing, and event.RunInTx is
					// db.DB.InTx with an event scope.
					report(n, "calls bun's RunInTx (use db.DB.InTx)")
				case sel.Sel.Name == "For" && len(n.Args) == 1:
					if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						report(n, "locking clause For(%s)", lit.Value)
					}
				}
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				return true
			}
			switch s {
			case "postgres", "postgresql", "mysql", "sqlite":
				report(n, "data source kind %q", s)
			}
			upper := strings.ToUpper(s)
			for _, clause := range []string{"FOR UPDATE", "SKIP LOCKED", "LOCK IN SHARE MODE", "FOR SHARE"} {
				if strings.Contains(upper, clause) {
					report(n, "locking clause %q in SQL text", clause)
				}
			}
		}
		return true
	})
	return out
}

// isPackage reports whether x is the name of one of the file's imports.
func isPackage(x ast.Expr, imports map[string]string) bool {
	id, ok := x.(*ast.Ident)
	return ok && imports[id.Name] != ""
}

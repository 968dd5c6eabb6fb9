package approval

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// decl is where a function of the package is declared.
type decl struct {
	file string // base name
	recv string // receiver type name, "" for a function
	fn   *ast.FuncDecl
}

// packageDecls parses the package's non-test files: every function by name (methods as
// "recv.name") and every rpc.Handle registration as action → handler method name. A few actions
// (get_instance_detail) are registered twice, on approval/my and approval/admin.
func packageDecls(t *testing.T) (map[string]decl, map[string][]string) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	decls := map[string]decl{}
	handlers := map[string][]string{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			key, recv := fd.Name.Name, ""
			if fd.Recv != nil {
				recv = receiverName(fd.Recv.List[0].Type)
				key = recv + "." + key
			}
			decls[key] = decl{file: name, recv: recv, fn: fd}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Handle" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			h, ok2 := call.Args[1].(*ast.SelectorExpr)
			if !ok || !ok2 {
				return true
			}
			action, _ := strconv.Unquote(lit.Value)
			handlers[action] = append(handlers[action], h.Sel.Name)
			return true
		})
	}
	return decls, handlers
}

func receiverName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestEngineLayout: following one decision is one path through the code. The read side of the
// engine (wire-approval §6.5–§6.7: approval/my's lists, counts and start form, approval/admin's
// lists and metrics, the instance detail of both) is the queries type in query_*.go files and
// builds no write; the engine's commands are declared in command_*.go (workers' in scanner.go).
func TestEngineLayout(t *testing.T) {
	t.Parallel()
	decls, handlers := packageDecls(t)
	reads := []string{"find_available_flows", "get_start_form", "find_initiated", "find_pending_tasks",
		"find_completed_tasks", "find_cc_records", "get_pending_counts", "get_instance_detail", "find_instances",
		"find_tasks", "find_action_logs", "get_metrics"}
	for _, action := range reads {
		if len(handlers[action]) == 0 {
			t.Errorf("%s: no rpc.Handle registration found", action)
		}
		for _, h := range handlers[action] {
			d, ok := decls["queries."+h]
			if !ok || !strings.HasPrefix(d.file, "query_") {
				t.Errorf("%s: handler %s is not a queries method in a query_*.go file", action, h)
			}
		}
	}
	writes := map[string]bool{"NewInsert": true, "NewUpdate": true, "NewDelete": true, "NewMerge": true, "NewCreateTable": true,
		"Exec": true, "ExecContext": true, "inTx": true, "later": true, "laterAs": true, "Publish": true}
	for key, d := range decls {
		if !strings.HasPrefix(d.file, "query_") && d.recv != "queries" {
			continue
		}
		ast.Inspect(d.fn, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && writes[sel.Sel.Name] {
				t.Errorf("%s (%s) calls %s: the read side writes nothing", key, d.file, sel.Sel.Name)
			}
			return true
		})
	}
	commands := []string{"start", "process_task", "withdraw", "resubmit", "add_cc", "mark_cc_read", "add_assignee",
		"remove_assignee", "urge_task", "terminate_instance", "reassign_task"}
	for _, action := range commands {
		for _, h := range handlers[action] {
			if d := decls["Service."+h]; !strings.HasPrefix(d.file, "command_") {
				t.Errorf("%s: handler %s is declared in %q, want a command_*.go file", action, h, d.file)
			}
		}
		if len(handlers[action]) == 0 {
			t.Errorf("%s: no rpc.Handle registration found", action)
		}
	}
}

// TestCatalogueMessages (issue #48 item 2): the module's errors take their messages from the
// catalogue in the server's language. The one literal message is the form designer's own
// validation text (FormDataError: design's validation.message, wire-approval §5); any other
// WithMessage would send English, or the host's internals, to the client.
func TestCatalogueMessages(t *testing.T) {
	decls, _ := packageDecls(t)
	for name, d := range decls {
		ast.Inspect(d.fn, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "WithMessage" && name != "FormDataError" {
				t.Errorf("%s (%s) sets a literal message: use a catalogue key (messages/*/approval.json)", name, d.file)
			}
			return true
		})
	}
}

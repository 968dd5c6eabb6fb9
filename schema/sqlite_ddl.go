package schema

import (
	"strings"
)

// SQLite keeps constraint names, CHECK expressions, partial-index predicates and view queries
// only in the SQL text of sqlite_schema; its pragmas do not report them. This file scans that
// text. It is a tokenizer plus a few patterns, not an SQL parser: it understands quoting,
// comments and parenthesis nesting, which is all the patterns need.

// token is one lexical token of a DDL statement.
type token struct {
	text       string // the raw text
	start, end int    // byte offsets in the statement
}

// word returns the token in upper case when it is a bare word, or "" otherwise.
func (t token) word() string {
	c := t.text[0]
	if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
		return strings.ToUpper(t.text)
	}
	return ""
}

// ident returns the identifier the token spells, without its quotes.
func (t token) ident() string {
	s := t.text
	if len(s) >= 2 {
		switch s[0] {
		case '"', '`':
			q := string(s[0])
			return strings.ReplaceAll(s[1:len(s)-1], q+q, q)
		case '[':
			return s[1 : len(s)-1]
		}
	}
	return s
}

// tokenize splits an SQL statement into tokens, dropping white space and comments.
func tokenize(sql string) []token {
	var toks []token
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			i = skipTo(sql, i, "\n")
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			i = skipTo(sql, i+1, "*/")
		case c == '\'' || c == '"' || c == '`':
			end := quotedEnd(sql, i, c)
			toks = append(toks, token{sql[i:end], i, end})
			i = end
		case c == '[':
			end := skipTo(sql, i, "]")
			toks = append(toks, token{sql[i:end], i, end})
			i = end
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			toks = append(toks, token{sql[i:j], i, j})
			i = j
		default:
			toks = append(toks, token{sql[i : i+1], i, i + 1})
			i++
		}
	}
	return toks
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// skipTo returns the offset just past the first sep at or after i, or len(s).
func skipTo(s string, i int, sep string) int {
	if k := strings.Index(s[i+1:], sep); k >= 0 {
		return i + 1 + k + len(sep)
	}
	return len(s)
}

// quotedEnd returns the offset just past the quoted token starting at i; a doubled quote
// character stands for itself.
func quotedEnd(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// closing returns the index of the ")" that closes the "(" at toks[i], or len(toks).
func closing(toks []token, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(toks)
}

// firstTopLevel returns the index of the first token at parenthesis depth 0, at or after from,
// that is the bare word w (or the punctuation w), or -1.
func firstTopLevel(toks []token, from int, w string) int {
	for j := from; j < len(toks); j++ {
		switch {
		case toks[j].word() == w || toks[j].text == w:
			return j
		case toks[j].text == "(":
			j = closing(toks, j)
		}
	}
	return -1
}

// identList reads the identifiers of a parenthesised column list starting at toks[i] ("("),
// skipping collation and order words after each name.
func identList(toks []token, i int) []string {
	if i >= len(toks) || toks[i].text != "(" {
		return nil
	}
	end := closing(toks, i)
	var names []string
	expectName := true
	for j := i + 1; j < end; j++ {
		switch {
		case toks[j].text == ",":
			expectName = true
		case toks[j].text == "(":
			j = closing(toks, j)
		case expectName:
			names = append(names, toks[j].ident())
			expectName = false
		}
	}
	return names
}

// afterWord returns the text of sql after the first top-level occurrence of word, trimmed, or "".
func afterWord(sql string, toks []token, from int, word string) string {
	if j := firstTopLevel(toks, from, word); j >= 0 {
		return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(sql[toks[j].end:]), ";"))
	}
	return ""
}

// indexPredicate returns the WHERE clause of a CREATE INDEX statement ("" when not partial).
func indexPredicate(sql string) string {
	toks := tokenize(sql)
	open := firstTopLevel(toks, 0, "(")
	if open < 0 {
		return ""
	}
	return afterWord(sql, toks, closing(toks, open)+1, "WHERE")
}

// viewQuery returns the query of a CREATE VIEW statement: the text after the top-level AS.
func viewQuery(sql string) string {
	return afterWord(sql, tokenize(sql), 0, "AS")
}

// tableDDL is what the CREATE TABLE text adds to SQLite's pragmas: constraint names and checks.
type tableDDL struct {
	pkName       string
	uniques      []namedKey
	foreignKeys  []namedKey
	checks       []Check
	withoutRowID bool
}

// namedKey is a UNIQUE or FOREIGN KEY constraint as written: its name ("" when unnamed), its
// columns and, for a foreign key, the referenced table.
type namedKey struct {
	name     string
	columns  []string
	refTable string
}

// parseCreateTable scans a CREATE TABLE statement for its table and column constraints.
func parseCreateTable(sql string) tableDDL {
	var d tableDDL
	toks := tokenize(sql)
	open := firstTopLevel(toks, 0, "(")
	if open < 0 {
		return d
	}
	end := closing(toks, open)
	for j := end + 1; j < len(toks); j++ {
		if toks[j].word() == "WITHOUT" {
			d.withoutRowID = true
		}
	}
	start := open + 1
	for j := start; j <= end && j < len(toks); j++ {
		switch {
		case j == end || toks[j].text == ",":
			d.item(sql, toks[start:j])
			start = j + 1
		case toks[j].text == "(":
			j = closing(toks, j)
		}
	}
	return d
}

// item reads one comma-separated item of the table body: a table constraint or a column.
func (d *tableDDL) item(sql string, it []token) {
	if len(it) == 0 {
		return
	}
	name, i := "", 0
	if it[0].word() == "CONSTRAINT" && len(it) > 2 {
		name, i = it[1].ident(), 2
	}
	switch it[i].word() {
	case "PRIMARY":
		d.pkName = name
	case "UNIQUE":
		d.uniques = append(d.uniques, namedKey{name: name, columns: identList(it, i+1)})
	case "CHECK":
		d.checks = append(d.checks, Check{Name: name, Expr: groupText(sql, it, i+1)})
	case "FOREIGN":
		cols := identList(it, i+2)
		d.foreignKeys = append(d.foreignKeys, namedKey{name: name, columns: cols, refTable: referenced(it, i+2)})
	default:
		if i == 0 {
			d.column(sql, it)
		}
	}
}

// column reads the constraints written on a column definition.
func (d *tableDDL) column(sql string, it []token) {
	col, pending := it[0].ident(), ""
	for j := 1; j < len(it); j++ {
		switch it[j].word() {
		case "CONSTRAINT":
			if j+1 < len(it) {
				pending = it[j+1].ident()
				j++
			}
			continue
		case "PRIMARY":
			if pending != "" {
				d.pkName = pending
			}
		case "UNIQUE":
			d.uniques = append(d.uniques, namedKey{name: pending, columns: []string{col}})
		case "CHECK":
			d.checks = append(d.checks, Check{Name: pending, Expr: groupText(sql, it, j+1)})
			if j+1 < len(it) && it[j+1].text == "(" {
				j = closing(it, j+1)
			}
		case "REFERENCES":
			d.foreignKeys = append(d.foreignKeys, namedKey{name: pending, columns: []string{col}, refTable: referenced(it, j)})
		default:
			if it[j].text == "(" {
				j = closing(it, j)
			}
			continue
		}
		pending = ""
	}
}

// referenced returns the table named after the first REFERENCES at or after from.
func referenced(it []token, from int) string {
	if r := firstTopLevel(it, from, "REFERENCES"); r >= 0 && r+1 < len(it) {
		return it[r+1].ident()
	}
	return ""
}

// groupText returns the text of the parenthesised group starting at it[k], parentheses
// included, or "".
func groupText(sql string, it []token, k int) string {
	if k < len(it) && it[k].text == "(" {
		if e := closing(it, k); e < len(it) {
			return sql[it[k].start:it[e].end]
		}
	}
	return ""
}

package mcp

import (
	"errors"
	"fmt"
	"strings"
)

// The read-only guard of database_query (wire-runtime §4) reads the statement as words and
// punctuation, outside string literals, quoted identifiers and comments, and fails closed. It
// gives early, clear errors; the database enforces read-only whatever the guard misses (see
// readonly.go).

// Reasons the guard refuses a statement.
var (
	errNotSelect     = errors.New("the statement must start with SELECT or WITH")
	errMultiple      = errors.New("multiple statements are not allowed")
	errUnterminated  = errors.New("unterminated string, identifier or comment")
	errExecComment   = errors.New("MySQL executable comments (/*! ... */) are not allowed")
	errAssignment    = errors.New("variable assignment (:=) is not allowed")
	errEmptyStatment = errors.New("empty statement")
)

// forbiddenWords may not appear as words anywhere in the statement: the data changes of a
// writable CTE and SELECT … INTO. Statements of any other kind are refused by the first word;
// words that are common column names (start, comment, set) are left to the database.
var forbiddenWords = map[string]bool{
	"insert": true, "update": true, "delete": true, "merge": true, "upsert": true, "into": true,
}

// lockingPairs are the two-word starts of locking clauses (FOR SHARE, FOR NO KEY UPDATE, FOR KEY
// SHARE, LOCK IN SHARE MODE); FOR UPDATE is caught by its second word.
var lockingPairs = map[[2]string]bool{
	{"for", "share"}: true, {"for", "no"}: true, {"for", "key"}: true, {"lock", "in"}: true,
}

// forbiddenFuncs are functions with side effects or outside reach: sleeping, locks, sequences,
// files, large objects, server signals, session settings, remote links and query executors.
var forbiddenFuncs = map[string]bool{
	"sleep": true, "benchmark": true, "get_lock": true, "release_lock": true,
	"release_all_locks": true, "is_free_lock": true, "is_used_lock": true, "load_file": true,
	"sys_exec": true, "sys_eval": true, "nextval": true, "setval": true, "currval": true,
	"lastval": true, "set_config": true, "pg_notify": true, "txid_current": true,
	"pg_current_xact_id": true, "pg_terminate_backend": true, "pg_cancel_backend": true,
	"pg_reload_conf": true, "pg_rotate_logfile": true, "pg_switch_wal": true, "pg_promote": true,
	"pg_create_restore_point": true, "pg_logical_emit_message": true, "query_to_xml": true,
	"query_to_xml_and_xmlschema": true, "query_to_xmlschema": true, "cursor_to_xml": true,
	"table_to_xml": true, "load_extension": true, "writefile": true, "readfile": true,
	"fts3_tokenizer": true, "edit": true, "master_pos_wait": true, "source_pos_wait": true,
}

// forbiddenPrefixes extend forbiddenFuncs to families of functions.
var forbiddenPrefixes = []string{
	"pg_sleep", "pg_advisory", "pg_try_advisory", "pg_read", "pg_ls_", "pg_stat_file",
	"pg_stat_reset", "pg_file", "pg_replication", "pg_create", "pg_drop", "lo_", "dblink",
}

// guardReadOnly returns nil when sql is one SELECT (or WITH … SELECT) statement free of the
// constructs above, else the reason it is refused.
func guardReadOnly(sql string) error {
	toks, err := tokenize(sql)
	if err != nil {
		return err
	}
	for len(toks) > 0 && toks[len(toks)-1] == ";" {
		toks = toks[:len(toks)-1]
	}
	first := 0
	for first < len(toks) && toks[first] == "(" {
		first++
	}
	if first == len(toks) {
		return errEmptyStatment
	}
	if toks[first] != "select" && toks[first] != "with" {
		return errNotSelect
	}
	for i, t := range toks {
		if err := checkToken(toks, i, t); err != nil {
			return err
		}
	}
	return nil
}

// checkToken applies the word, function and punctuation rules to token i.
func checkToken(toks []string, i int, t string) error {
	switch {
	case t == ";":
		return errMultiple
	case t == ":=":
		return errAssignment
	case forbiddenWords[t]:
		return fmt.Errorf("%s is not allowed", strings.ToUpper(t))
	case i+1 < len(toks) && lockingPairs[[2]string{t, toks[i+1]}]:
		return fmt.Errorf("locking clause %s %s is not allowed", strings.ToUpper(t), strings.ToUpper(toks[i+1]))
	case i+1 < len(toks) && toks[i+1] == "(" && forbiddenFunc(t):
		return fmt.Errorf("function %s is not allowed", t)
	}
	return nil
}

// forbiddenFunc reports whether name is a forbidden function. A schema-qualified name is judged
// by its last part.
func forbiddenFunc(name string) bool {
	if forbiddenFuncs[name] {
		return true
	}
	for _, p := range forbiddenPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// tokenize splits sql into lower-cased words, ":=" and single punctuation characters, dropping
// white space, comments, string literals (standard, E”, dollar-quoted) and quoted identifiers.
func tokenize(sql string) ([]string, error) {
	var toks []string
	for i := 0; i < len(sql); {
		c := sql[i]
		n, err := skipIgnored(sql, i)
		switch {
		case err != nil:
			return nil, err
		case n > i:
			i = n
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			toks = append(toks, strings.ToLower(sql[i:j]))
			i = j
		case c == ':' && i+1 < len(sql) && sql[i+1] == '=':
			toks = append(toks, ":=")
			i += 2
		default:
			toks = append(toks, string(c))
			i++
		}
	}
	return toks, nil
}

// skipIgnored returns the index after the white space, comment, literal or quoted identifier at
// i, or i when there is none there.
func skipIgnored(sql string, i int) (int, error) {
	c := sql[i]
	switch {
	case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
		return i + 1, nil
	case strings.HasPrefix(sql[i:], "/*!"):
		return 0, errExecComment
	case strings.HasPrefix(sql[i:], "/*"):
		return closeAfter(sql, i+2, "*/")
	case strings.HasPrefix(sql[i:], "--") || c == '#':
		if j := strings.IndexByte(sql[i:], '\n'); j >= 0 {
			return i + j + 1, nil
		}
		return len(sql), nil
	case c == '\'' || c == '"' || c == '`':
		return closeQuote(sql, i+1, c)
	case c == '$':
		if tag, ok := dollarTag(sql[i:]); ok {
			return closeAfter(sql, i+len(tag), tag)
		}
	}
	return i, nil
}

// closeQuote returns the index after the quote q that ends the literal starting at i; a doubled
// quote and a backslash escape stay inside (MySQL reads backslashes, PostgreSQL E” strings too;
// treating them as escapes can only make the guard stricter).
func closeQuote(sql string, i int, q byte) (int, error) {
	for i < len(sql) {
		switch {
		case sql[i] == '\\' && q != '`':
			i += 2
		case sql[i] == q && i+1 < len(sql) && sql[i+1] == q:
			i += 2
		case sql[i] == q:
			return i + 1, nil
		default:
			i++
		}
	}
	return 0, errUnterminated
}

// closeAfter returns the index after the first end at or after i.
func closeAfter(sql string, i int, end string) (int, error) {
	j := strings.Index(sql[i:], end)
	if j < 0 {
		return 0, errUnterminated
	}
	return i + j + len(end), nil
}

// dollarTag returns the $tag$ opening a PostgreSQL dollar-quoted string at the start of s.
func dollarTag(s string) (string, bool) {
	for j := 1; j < len(s); j++ {
		switch {
		case s[j] == '$':
			return s[:j+1], true
		case !isWordByte(s[j]) || (j == 1 && s[j] >= '0' && s[j] <= '9'):
			return "", false // $1 is a parameter, not a tag
		}
	}
	return "", false
}

// isWordByte reports bytes of identifiers and keywords (any non-ASCII byte counts as a letter).
func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

package crud

import (
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
)

// labelKey is the labels rule the original's modules share (wire-integration §4, wire-approval
// §6.3): alphanumeric at both ends, '_' and '-' inside, at most 63 characters.
var labelKey = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$`)

// MaxLabelValue is the longest label value, in characters.
const MaxLabelValue = 256

// LabelProblem describes the first label that breaks the labels rule ("key \"a b\"", "value of
// \"k\" exceeds 256 characters"), or "" when every label is valid. Each module wraps it in its
// own error code.
func LabelProblem(labels map[string]string) string {
	for k, v := range labels {
		switch {
		case len(k) > 63 || !labelKey.MatchString(k):
			return fmt.Sprintf("key %q", k)
		case utf8.RuneCountInString(v) > MaxLabelValue:
			return fmt.Sprintf("value of %q exceeds %d characters", k, MaxLabelValue)
		}
	}
	return ""
}

// LabelFilter keeps the rows whose JSON labels column holds every pair of labels, with each
// dialect's JSON functions. A key outside the labels rule matches nothing (and never reaches a
// JSON path).
func LabelFilter(kind config.DBKind, q *bun.SelectQuery, column string, labels map[string]string) *bun.SelectQuery {
	for k, v := range labels {
		if len(k) > 63 || !labelKey.MatchString(k) {
			return q.Where("1 = 0")
		}
		path := `$."` + k + `"`
		switch kind {
		case config.Postgres:
			q = q.Where("? ->> ? = ?", bun.Ident(column), k, v)
		case config.MySQL:
			q = q.Where("JSON_UNQUOTE(JSON_EXTRACT(?, ?)) = ?", bun.Ident(column), path, v)
		default:
			q = q.Where("json_extract(?, ?) = ?", bun.Ident(column), path, v)
		}
	}
	return q
}

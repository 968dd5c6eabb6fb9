package crud

import (
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/svc-framework/svc/db"
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

// LabelFilter keeps the rows whose JSON labels column holds every pair of labels, through d's
// JSON functions (db.DB.WhereJSONText). A key outside the labels rule matches nothing (and never
// reaches a JSON path).
func LabelFilter(d *db.DB, q *bun.SelectQuery, column string, labels map[string]string) *bun.SelectQuery {
	for k, v := range labels {
		if len(k) > 63 || !labelKey.MatchString(k) {
			return q.Where("1 = 0")
		}
		q = d.WhereJSONText(q, column, k, v)
	}
	return q
}

package cron

import (
	"encoding/json"
	"strings"

	"github.com/uptrace/bun"
)

// sortTerm is one entry of meta.sort (wire-core §9: {column, direction, nullsOrder}).
type sortTerm struct {
	Column    string `json:"column"`
	Direction string `json:"direction"`
	// NullsOrder: 0 the database's default, 1 nulls first, 2 nulls last.
	NullsOrder int `json:"nullsOrder"`
}

// Sortable columns of find_page by JSON field name, both wire shapes (wire-runtime §1.4).
var (
	scheduleSortColumns = map[string]string{
		"name": "name", "jobName": "job_name", "kind": "kind", "isEnabled": "is_enabled",
		"nextFireAt": "next_fire_at_unix_ms", "nextFireAtUnixMs": "next_fire_at_unix_ms",
		"lastFireAt": "last_fire_at_unix_ms", "lastFireAtUnixMs": "last_fire_at_unix_ms",
		"createdAt": "created_at", "updatedAt": "updated_at", "id": "id",
	}
	runSortColumns = map[string]string{
		"id": "id", "scheduleName": "schedule_name", "jobName": "job_name", "status": "status", "nodeId": "node_id",
		"scheduledAt": "scheduled_at_unix_ms", "scheduledAtUnixMs": "scheduled_at_unix_ms",
		"claimedAt": "claimed_at_unix_ms", "claimedAtUnixMs": "claimed_at_unix_ms",
		"startedAt": "started_at_unix_ms", "startedAtUnixMs": "started_at_unix_ms",
		"finishedAt": "finished_at_unix_ms", "finishedAtUnixMs": "finished_at_unix_ms",
		"durationMs": "duration_ms",
	}
)

// orderBy applies meta.sort over the allowed columns (unknown columns and a malformed sort are
// ignored, as the original's crud ignores fields it cannot map), then the default order, which
// also breaks ties. Nulls order is portable: (col IS NULL) sorts before the column.
func orderBy(q *bun.SelectQuery, meta json.RawMessage, columns map[string]string, def string) *bun.SelectQuery {
	var m struct {
		Sort []sortTerm `json:"sort"`
	}
	_ = json.Unmarshal(meta, &m)
	for _, t := range m.Sort {
		col, ok := columns[t.Column]
		if !ok {
			continue
		}
		switch t.NullsOrder {
		case 1:
			q = q.OrderExpr("(? IS NULL) DESC", bun.Ident(col))
		case 2:
			q = q.OrderExpr("(? IS NULL) ASC", bun.Ident(col))
		}
		if strings.EqualFold(t.Direction, "desc") {
			q = q.OrderExpr("? DESC", bun.Ident(col))
		} else {
			q = q.OrderExpr("? ASC", bun.Ident(col))
		}
	}
	return q.OrderExpr(def)
}

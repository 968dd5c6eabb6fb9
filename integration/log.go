package integration

import (
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
)

// LogSearch filters the invocation log, every field equal (wire-integration §5.7).
type LogSearch struct {
	SystemCode   string `json:"systemCode"`
	ContractCode string `json:"contractCode"`
	Direction    string `json:"direction"`
	FailureKind  string `json:"failureKind"`
	RequestID    string `json:"requestId"`
}

// logResource is integration/log: find_page and find_one (the first match of the filters, no
// id filter), newest first, under integration.log.query.
func (s *Service) logResource() rpc.Resource {
	q := &crud.Query[InvocationLog, LogSearch]{Name: "integration/log", Permission: "integration.log", DB: s.db,
		Search: crud.NewSearch(
			crud.Eq("system_code", func(q *LogSearch) string { return q.SystemCode }),
			crud.Eq("contract_code", func(q *LogSearch) string { return q.ContractCode }),
			crud.Eq("direction", func(q *LogSearch) string { return q.Direction }),
			crud.Eq("failure_kind", func(q *LogSearch) string { return q.FailureKind }),
			crud.Eq("request_id", func(q *LogSearch) string { return q.RequestID }),
		).Sortable("durationMs").OrderBy("created_at DESC, id DESC")}
	return rpc.Resource{Name: q.Name, Ops: []rpc.Op{q.FindPage(), q.FindOne()}}
}

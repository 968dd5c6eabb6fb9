package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/svc-framework/svc/rpc"
)

// QueryTool is the name of the built-in read-only SQL tool (wire-runtime §4).
const QueryTool = "database_query"

// queryArgs are the arguments of database_query.
type queryArgs struct {
	SQL    string `json:"sql"`
	Params []any  `json:"params,omitempty"`
}

// querySchema is the input schema of database_query.
var querySchema = json.RawMessage(`{"type":"object","properties":{` +
	`"sql":{"type":"string","description":"One read-only SELECT (or WITH … SELECT) statement; ? marks a parameter."},` +
	`"params":{"type":"array","description":"Values bound to the ? placeholders, in order.","items":{}}},` +
	`"required":["sql"]}`)

// addQueryTool registers database_query, visible only to callers holding
// svc.mcp.query.permission.
func (s *Service) addQueryTool() {
	s.server.AddTool(&sdk.Tool{
		Name: QueryTool,
		Description: "Runs one read-only SQL query on the primary database (" + string(s.db.Kind) +
			") and returns the rows as a JSON array of objects. Writes are refused by the database; at most " +
			strconv.Itoa(s.cfg.Query.MaxRows) + " rows are returned and the query is stopped after " +
			s.cfg.Query.Timeout.String() + ".",
		InputSchema: querySchema,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, s.query)
	s.show(QueryTool, visibility{authenticated: true, permission: s.cfg.Query.Permission})
}

// query is the database_query handler. Its failures are tool errors with the texts of
// wire-runtime §4, in the process language.
func (s *Service) query(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	p := Principal(req.Extra)
	if err := s.perms.CheckPermission(ctx, p, s.cfg.Query.Permission); err != nil {
		return s.rpcError(err), nil
	}
	var args queryArgs
	dec := json.NewDecoder(bytes.NewReader(req.Params.Arguments))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return s.failure(ErrArgumentsInvalid, err.Error()), nil
	}
	if strings.TrimSpace(args.SQL) == "" {
		return s.failure(ErrSQLRequired, ""), nil
	}
	if err := guardReadOnly(args.SQL); err != nil {
		return s.failure(ErrNotReadOnly, err.Error()), nil
	}
	res, err := s.runReadOnly(ctx, args.SQL, bindable(args.Params))
	if err != nil {
		s.log.Info("mcp: database_query failed", "principal", p.ID, "error", err)
		return s.failure(ErrQueryFailed, err.Error()), nil
	}
	b, err := json.Marshal(res.Rows)
	if err != nil {
		return s.failure(ErrEncodeFailed, err.Error()), nil
	}
	out := textResult(string(b))
	if res.Truncated {
		out.Content = append(out.Content, &sdk.TextContent{Text: s.msgs.T(msgTruncated,
			map[string]string{"rows": strconv.Itoa(s.cfg.Query.MaxRows)})})
	}
	return out, nil
}

// bindable turns JSON numbers into int64 or float64 so the formatter writes them as numbers.
func bindable(params []any) []any {
	for i, v := range params {
		if n, ok := v.(json.Number); ok {
			if iv, err := n.Int64(); err == nil {
				params[i] = iv
			} else if fv, err := n.Float64(); err == nil {
				params[i] = fv
			} else {
				params[i] = n.String()
			}
		}
	}
	return params
}

// failure is a tool error from one of the module's message templates with its reason.
func (s *Service) failure(tmpl *rpc.Error, reason string) *sdk.CallToolResult {
	return toolError(s.msgs.T(tmpl.Key, map[string]string{"reason": reason}))
}

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/svc-framework/svc/db"
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
	`"sql":{"type":"string","description":"Exactly one read-only statement (SELECT, or WITH … SELECT); ? marks a parameter."},` +
	`"params":{"type":"array","description":"Values bound to the ? placeholders, in order.","items":{}}},` +
	`"required":["sql"]}`)

// addQueryTool registers database_query, visible only to callers holding
// svc.mcp.query.permission.
func (s *Service) addQueryTool() {
	s.server.AddTool(&sdk.Tool{
		Name: QueryTool,
		Description: "Runs one read-only SQL statement on the " + string(s.source.Type) + " database " +
			"and returns the rows as a JSON array of objects. The database refuses writes and more than one statement; at most " +
			strconv.Itoa(s.cfg.Query.MaxRows) + " rows and " + strconv.FormatInt(int64(s.cfg.Query.MaxBytes), 10) +
			" bytes of JSON are returned and the query is stopped after " + s.cfg.Query.Timeout.String() + ".",
		InputSchema: querySchema,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, s.query)
	s.fast[QueryTool] = s.query // its answer is written in pieces there, not copied (fastcall.go)
	s.show(QueryTool, visibility{authenticated: true, permission: s.cfg.Query.Permission})
}

// query is the database_query handler. Its failures are tool errors with the texts of
// wire-runtime §4, in the process language. The call's deadline (svc.mcp.query.timeout plus
// encodeGrace) covers reading the rows, encoding them (answer, as they are read) and, through
// the HTTP connection's write deadline, writing the answer.
func (s *Service) query(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	p := Principal(req.Extra)
	if err := s.perms.CheckPermission(ctx, p, s.cfg.Query.Permission); err != nil {
		return s.rpcError(err), nil
	}
	if n := len(req.Params.Arguments); n > int(s.cfg.Query.MaxSQLBytes) {
		return toolError(s.msgs.T(ErrSQLTooLarge.Key, map[string]string{
			"bytes": strconv.Itoa(n), "max": strconv.FormatInt(int64(s.cfg.Query.MaxSQLBytes), 10)})), nil
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
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Query.Timeout+encodeGrace)
	defer cancel()
	limitWrite(ctx)
	ans := newAnswer(int(s.cfg.Query.MaxBytes))
	truncated, err := s.runReadOnly(ctx, args.SQL, bindable(args.Params), ans)
	if err != nil {
		s.log.Info("mcp: database_query failed", "principal", p.ID, "error", err)
		return s.queryFailure(err), nil
	}
	var note string
	if truncated {
		note = s.msgs.T(msgTruncated, map[string]string{"rows": strconv.Itoa(s.cfg.Query.MaxRows)})
		if !ans.fits(len(note)) {
			return s.queryFailure(errAnswerTooLarge), nil
		}
	}
	out := textResult(ans.finish())
	if truncated {
		out.Content = append(out.Content, &sdk.TextContent{Text: note})
	}
	return out, nil
}

// queryFailure is the tool error of a failed query: a statement the database refused as not
// one read, the byte cap (the encoded answer's or a single row's), a value JSON cannot
// represent, or the database's own error (timeouts and a refused login included).
func (s *Service) queryFailure(err error) *sdk.CallToolResult {
	switch {
	case errors.Is(err, db.ErrNotReadOnly), errors.Is(err, db.ErrMultipleStatements), errors.Is(err, db.ErrEmptyStatement):
		return s.failure(ErrNotReadOnly, err.Error())
	case errors.Is(err, errAnswerTooLarge), errors.Is(err, db.ErrResultTooLarge):
		return toolError(s.msgs.T(ErrResultTooLarge.Key, map[string]string{"bytes": strconv.FormatInt(int64(s.cfg.Query.MaxBytes), 10)}))
	case errors.Is(err, errNotEncodable):
		return s.failure(ErrEncodeFailed, err.Error())
	}
	return s.failure(ErrQueryFailed, err.Error())
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

package mcp

import (
	"net/http"

	"github.com/svc-framework/svc/rpc"
)

// Codes of the endpoint's tool errors. They never travel in an /api envelope: database_query
// reports them as MCP tool error results whose text is the rendered message (wire-runtime §4).
const (
	ErrCodeArgumentsInvalid = 2800
	ErrCodeSQLRequired      = 2801
	ErrCodeNotReadOnly      = 2802
	ErrCodeQueryFailed      = 2803
	ErrCodeEncodeFailed     = 2804
	ErrCodeResultTooLarge   = 2805
	ErrCodeSQLTooLarge      = 2806
)

// Tool error templates of database_query (wire-runtime §4). The {{reason}} placeholder carries
// the parser's or the database's explanation.
var (
	// ErrArgumentsInvalid: the arguments are not {sql, params?} JSON.
	ErrArgumentsInvalid = rpc.NewError(ErrCodeArgumentsInvalid, http.StatusOK, "mcp_arguments_invalid")
	// ErrSQLRequired: sql is missing or blank.
	ErrSQLRequired = rpc.NewError(ErrCodeSQLRequired, http.StatusOK, "mcp_sql_required")
	// ErrNotReadOnly: the database refused the statement as not exactly one read (a write, DDL,
	// ATTACH, a PRAGMA, a second statement, a denied function).
	ErrNotReadOnly = rpc.NewError(ErrCodeNotReadOnly, http.StatusOK, "mcp_sql_not_read_only")
	// ErrQueryFailed: the database refused or failed the query (a write in the read-only
	// transaction, the statement timeout, a syntax error).
	ErrQueryFailed = rpc.NewError(ErrCodeQueryFailed, http.StatusOK, "mcp_query_failed")
	// ErrEncodeFailed: the rows could not be encoded as JSON, or the deadline passed while they
	// were.
	ErrEncodeFailed = rpc.NewError(ErrCodeEncodeFailed, http.StatusOK, "mcp_encode_failed")
	// ErrResultTooLarge: the encoded answer (or one row of values) passed
	// svc.mcp.query.max_bytes; the statement was stopped. Its template takes {{bytes}}, the cap.
	ErrResultTooLarge = rpc.NewError(ErrCodeResultTooLarge, http.StatusOK, "mcp_result_too_large")
	// ErrSQLTooLarge: the call's arguments are longer than svc.mcp.query.max_sql_bytes; nothing
	// was decoded or run. Its template takes {{bytes}}, their length, and {{max}}, the cap.
	ErrSQLTooLarge = rpc.NewError(ErrCodeSQLTooLarge, http.StatusOK, "mcp_sql_too_large")
)

// msgTruncated is the note added when rows past svc.mcp.query.max_rows were dropped.
const msgTruncated = "mcp_rows_truncated"

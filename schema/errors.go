package schema

import (
	"net/http"

	"github.com/svc-framework/svc/rpc"
)

// CodeTableNotFound is the business code of ErrTableNotFound (wire-core §2.4).
const CodeTableNotFound = 2300

// ErrTableNotFound answers get_table_schema for a name that is not a base table of the inspected
// schema (views included): HTTP 200, code 2300 (wire-core §8.1).
var ErrTableNotFound = rpc.NewError(CodeTableNotFound, http.StatusOK, "schema_table_not_found")

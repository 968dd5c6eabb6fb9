package design

import (
	"embed"
	"io/fs"

	"github.com/svc-framework/svc/i18n"
)

//go:embed messages
var messageFiles embed.FS

// Messages returns the catalog of the approval_form_field_* keys and of the design rules'
// texts — approval_design_flow_<rule> (RuleError), approval_design_form_<rule> (SchemaError) and
// the approval_design_at_* locations (node, edge, branch, field) —
// (messages/<lang>/approval_design.json, en and zh-CN) for the approval module to merge into
// its own; approval_form_data_too_large (params size, max) stays in the module's catalog, next
// to its 40401 sentinel.
func Messages() fs.FS { return i18n.MustSub(messageFiles, "messages") }

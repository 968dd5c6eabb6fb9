package design

import (
	"embed"
	"io/fs"

	"github.com/svc-framework/svc/i18n"
)

//go:embed messages
var messageFiles embed.FS

// Messages returns the catalog of the form-data message keys (messages/<lang>/approval_design.json,
// en and zh-CN) for the approval module to merge into its own.
func Messages() fs.FS { return i18n.MustSub(messageFiles, "messages") }

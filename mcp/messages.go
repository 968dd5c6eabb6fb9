package mcp

import (
	"embed"
	"io/fs"

	"github.com/svc-framework/svc/i18n"
)

//go:embed messages
var messageFiles embed.FS

// Messages is the module's message catalog (messages/<lang>/mcp.json).
func Messages() fs.FS { return i18n.MustSub(messageFiles, "messages") }

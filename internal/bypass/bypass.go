// Package bypass is the one switch of svc's performance bypasses: code that steps around a
// library's normal path because the normal path measured too slow or too large (the list, each
// with its measured gain, guard test and plain path, is docs/architecture.md, "Performance
// bypasses"). Each bypass asks On once, when its owner is built, and takes the library's plain
// path when it answers false.
//
// The switch is the environment variable SVC_BYPASS_OFF, read once per process: "1" or "all"
// turns every bypass off, a comma-separated list of their names (the constants below) turns off
// those. It exists so that a library upgrade that breaks a bypass's assumptions can be
// answered by an operator without a rebuild, and so that CI runs the bypasses' guard tests on
// the plain path too (scripts/test.sh).
package bypass

import (
	"os"
	"strings"
	"sync"
)

// Env is the environment variable that switches bypasses off.
const Env = "SVC_BYPASS_OFF"

// The bypasses, by the name SVC_BYPASS_OFF lists them under.
const (
	// MCPFastCall: mcp/fastcall.go answers a tools/call of an operation tool without the MCP
	// SDK's stateless session machinery.
	MCPFastCall = "mcp.fastcall"
	// PushBuffers: push/hijack.go hands coder/websocket a hijacked connection with small
	// buffers instead of net/http's, relying on how the library adopts them.
	PushBuffers = "push.buffers"
	// BackupNice: backup/priority_linux.go writes a background backup on a thread of its own
	// with a lowered scheduling priority.
	BackupNice = "backup.nice"
)

// setting is SVC_BYPASS_OFF as the process started with it.
var setting = sync.OnceValue(func() string { return os.Getenv(Env) })

// On reports whether bypass name is in use: false when SVC_BYPASS_OFF is "1" or "all" or lists
// name.
func On(name string) bool { return !offIn(setting(), name) }

// offIn reports whether the value v of SVC_BYPASS_OFF switches name off.
func offIn(v, name string) bool {
	for item := range strings.SplitSeq(v, ",") {
		switch strings.TrimSpace(item) {
		case "1", "all", name:
			return true
		}
	}
	return false
}

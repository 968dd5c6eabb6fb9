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
	// AppAccessLine: app/logwriter.go formats the access-log line of svc's default logger
	// itself, the bytes slog's JSON handler would write, instead of building a slog record.
	AppAccessLine = "app.accessline"
	// RPCEnvelope: rpc/envelope.go scans the top level of a JSON request envelope by hand
	// instead of decoding it with encoding/json into a map of raw values.
	RPCEnvelope = "rpc.envelope"
	// PushBuffers: push/hijack.go hands coder/websocket a hijacked connection with small
	// buffers instead of net/http's, relying on how the library adopts them.
	PushBuffers = "push.buffers"
	// SecurityJWT: security/jwtown.go verifies and decodes a token in the exact form svc signs
	// without golang-jwt's parser and encoding/json's reflection.
	SecurityJWT = "security.jwt"
	// StartPages: internal/startmem drops the ready binary's mappings of its executable's
	// read-only pages once the server has started, so that the pages only the start-up touched
	// stop counting in its resident set.
	StartPages = "start.pages"
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

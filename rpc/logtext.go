package rpc

import "unicode/utf8"

// Bounds of user input in log lines (issue #11 item 7): a 1 MB principal or path must not make a
// 1 MB log line.
const (
	// MaxLoggedBytes is the most bytes of one identifier or piece of user input a log line
	// carries.
	MaxLoggedBytes = 256
	// TruncatedSuffix marks a value LogText cut.
	TruncatedSuffix = "…(truncated)"
)

// LogText returns s for a log line: unchanged when it has at most MaxLoggedBytes bytes (no
// allocation), else its first MaxLoggedBytes bytes, cut back to a character boundary, followed
// by TruncatedSuffix. Every identifier or user input that a log line of the access log, the
// engine, the audit or the security events carries goes through it.
func LogText(s string) string {
	if len(s) <= MaxLoggedBytes {
		return s
	}
	i := MaxLoggedBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + TruncatedSuffix
}

package outbox

import (
	"regexp"
	"unicode/utf8"
)

// maxLastError bounds sys_event_outbox.last_error (wire-runtime §2.4).
const maxLastError = 256

// secretPatterns find what last_error must not keep: credentials in key=value or JSON form,
// bearer/basic tokens, Authorization values and ip:port addresses.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(authorization"?\s*[:=]\s*"?)[^",;\s]+(\s+[^",;\s]+)?`),
	regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`),
	regexp.MustCompile(`(?i)((?:password|passwd|pwd|secret|token|api[_-]?key|credentials)"?\s*[:=]\s*"?)[^",;&\s]+`),
	regexp.MustCompile(`(?i)(://[^:/@\s]+:)[^@\s]+@`),
	regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}:\d{1,5}\b|\[[0-9a-fA-F:]+\]:\d{1,5}`),
}

// cleanError redacts secrets and addresses from msg and cuts it to 256 bytes on a rune boundary.
func cleanError(msg string) string {
	for i, re := range secretPatterns {
		switch i {
		case 1:
			msg = re.ReplaceAllString(msg, "$1 [REDACTED]")
		case 4:
			msg = re.ReplaceAllString(msg, "[ADDR]")
		default:
			msg = re.ReplaceAllString(msg, "${1}[REDACTED]")
		}
	}
	if len(msg) <= maxLastError {
		return msg
	}
	cut := maxLastError
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut]
}

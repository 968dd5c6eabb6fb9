package rpc

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Bounds and marks of the request and result data an audit record carries.
const (
	// MaxAuditValueBytes is the most bytes of JSON an audit record keeps of the request params,
	// the request meta or the result data, each measured before redaction. A larger value is
	// replaced by a TruncatedAuditValue.
	MaxAuditValueBytes = 8 << 10
	// RedactedAuditValue replaces the value of a credential-like key (AuditRedacts).
	RedactedAuditValue = "[REDACTED]"
)

// TruncatedAuditValue stands for a value of more than MaxAuditValueBytes: its size only.
type TruncatedAuditValue struct {
	Truncated bool `json:"truncated"` // always true
	Bytes     int  `json:"bytes"`     // size of the value's JSON
}

// credentialWords mark a key whose value an audit record never carries: a key containing one
// of them, compared case-insensitively with '_', '-' and '.' removed (newPassword,
// refresh_token, client-secret, X-Api-Key, …).
var credentialWords = []string{"password", "passwd", "secret", "token", "credential", "apikey", "authorization",
	"privatekey", "accesskey", "cookie", "signature", "otp"}

// AuditRedacts reports whether the value of key is redacted from audit records.
func AuditRedacts(key string) bool {
	k := strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(key))
	if k == "pwd" || k == "pin" {
		return true
	}
	for _, w := range credentialWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// auditJSON is raw JSON (request params or meta) as an audit value: nil when absent, a
// TruncatedAuditValue past MaxAuditValueBytes, else the decoded value with the values of
// credential-like keys redacted at any depth. The result shares nothing with raw.
func auditJSON(raw []byte) any {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if len(raw) > MaxAuditValueBytes {
		return TruncatedAuditValue{Truncated: true, Bytes: len(raw)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil // not JSON (a form field that failed decoding): nothing to record
	}
	return redactAudit(v)
}

// auditResult is a handler's result as an audit value (through its JSON, as the client got it).
func auditResult(data any) any {
	if data == nil {
		return nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil
	}
	return auditJSON(raw)
}

// redactAudit replaces, in place, the values of credential-like keys of every object in v.
func redactAudit(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if AuditRedacts(k) {
				x[k] = RedactedAuditValue
			} else {
				x[k] = redactAudit(val)
			}
		}
	case []any:
		for i, val := range x {
			x[i] = redactAudit(val)
		}
	}
	return v
}

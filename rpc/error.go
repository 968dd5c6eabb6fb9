package rpc

import (
	"errors"
	"net/http"
	"strings"
)

// Error is a business error with the wire code, HTTP status and message key of wire-core §2.
// The message is rendered from Key (and Args) in the process-wide language by the one renderer;
// Message, when set, is used verbatim instead (for host errors that carry their own text).
//
// Error values declared at package level are templates: derive request-specific errors with
// WithArgs, WithMessage or Wrap, which return copies, so the templates are never mutated.
type Error struct {
	Code    int               // business code of the envelope
	Status  int               // HTTP status; 0 means 200
	Key     string            // i18n message key
	Args    map[string]string // placeholders for the message ({{name}})
	Message string            // literal message, overrides Key when non-empty
	Data    any               // optional envelope data (usually nil)
	cause   error
}

// NewError declares an error template with a code, HTTP status and message key.
func NewError(code, status int, key string) *Error {
	return &Error{Code: code, Status: status, Key: key}
}

// Error implements error. It never includes Args values that may carry secrets; it names the key.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("rpc error ")
	b.WriteString(itoa(e.Code))
	b.WriteString(" (")
	if e.Message != "" {
		b.WriteString(e.Message)
	} else {
		b.WriteString(e.Key)
	}
	b.WriteString(")")
	if e.cause != nil {
		b.WriteString(": ")
		b.WriteString(e.cause.Error())
	}
	return b.String()
}

// Unwrap returns the internal cause, if any. The cause is logged, never sent.
func (e *Error) Unwrap() error { return e.cause }

// Is makes errors.Is match any copy of the same template (same code, status and key).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Key == e.Key && t.HTTPStatus() == e.HTTPStatus()
}

// HTTPStatus returns the HTTP status to answer with (200 when unset).
func (e *Error) HTTPStatus() int {
	if e.Status == 0 {
		return http.StatusOK
	}
	return e.Status
}

// WithArgs returns a copy of e whose message placeholders are filled from kv pairs
// ("minutes", "3", ...).
func (e *Error) WithArgs(kv ...string) *Error {
	c := *e
	c.Args = make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		c.Args[kv[i]] = kv[i+1]
	}
	return &c
}

// WithMessage returns a copy of e with a literal message (for example a validation message
// naming the field).
func (e *Error) WithMessage(msg string) *Error {
	c := *e
	c.Message = msg
	return &c
}

// WithData returns a copy of e that carries data in the envelope.
func (e *Error) WithData(data any) *Error {
	c := *e
	c.Data = data
	return &c
}

// Wrap returns a copy of e with an internal cause kept for logging.
func (e *Error) Wrap(cause error) *Error {
	c := *e
	c.cause = cause
	return &c
}

// AsError finds the *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

package rpc

import (
	"net/http"
	"strconv"
	"unicode/utf8"
)

// Validation error templates: 400/1400 with a message that names the field (issue: "a message
// that names the field"). The field name is the JSON name the client sent.
var (
	ErrValidationRequired = NewError(CodeBadRequest, http.StatusBadRequest, "validation_required")
	ErrValidationMaxLen   = NewError(CodeBadRequest, http.StatusBadRequest, "validation_max_length")
	ErrValidationMinLen   = NewError(CodeBadRequest, http.StatusBadRequest, "validation_min_length")
	ErrValidationMin      = NewError(CodeBadRequest, http.StatusBadRequest, "validation_min")
	ErrValidationMax      = NewError(CodeBadRequest, http.StatusBadRequest, "validation_max")
	ErrValidationInvalid  = NewError(CodeBadRequest, http.StatusBadRequest, "validation_invalid")
)

// Check collects the first validation failure of a params value. Typical use in a Validate
// method:
//
//	var c rpc.Check
//	c.Required("filename", p.Filename != "")
//	c.MaxLen("filename", p.Filename, 255)
//	return c.Err()
type Check struct {
	err *Error
}

// Err returns the first failure, or nil.
func (c *Check) Err() error {
	if c.err == nil {
		return nil
	}
	return c.err
}

func (c *Check) fail(e *Error, kv ...string) {
	if c.err == nil {
		c.err = e.WithArgs(kv...)
	}
}

// Required fails when present is false.
func (c *Check) Required(field string, present bool) {
	if !present {
		c.fail(ErrValidationRequired, "field", field)
	}
}

// MaxLen fails when s has more than max characters (runes).
func (c *Check) MaxLen(field, s string, max int) {
	if utf8.RuneCountInString(s) > max {
		c.fail(ErrValidationMaxLen, "field", field, "max", strconv.Itoa(max))
	}
}

// MinLen fails when s has fewer than min characters (runes).
func (c *Check) MinLen(field, s string, min int) {
	if utf8.RuneCountInString(s) < min {
		c.fail(ErrValidationMinLen, "field", field, "min", strconv.Itoa(min))
	}
}

// Min fails when v < min.
func (c *Check) Min(field string, v, min int64) {
	if v < min {
		c.fail(ErrValidationMin, "field", field, "min", strconv.FormatInt(min, 10))
	}
}

// Max fails when v > max.
func (c *Check) Max(field string, v, max int64) {
	if v > max {
		c.fail(ErrValidationMax, "field", field, "max", strconv.FormatInt(max, 10))
	}
}

// Identifier fails when s is not identifier-like (invalid UTF-8 or a control character such as
// NUL: 400/1400 "field is invalid") or has more than max characters. Use it for every param
// that names something — a principal, an id, a key — so such input never reaches a store or a
// log line (issue #11 item 5).
func (c *Check) Identifier(field, s string, max int) {
	if !validIdentifier(s) {
		c.fail(ErrValidationInvalid, "field", field)
		return
	}
	c.MaxLen(field, s, max)
}

// Valid fails with a generic "field is invalid" message when ok is false.
func (c *Check) Valid(field string, ok bool) {
	if !ok {
		c.fail(ErrValidationInvalid, "field", field)
	}
}

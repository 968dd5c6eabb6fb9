package rpc

import (
	"bytes"
	"encoding/json"
)

// fieldState records what the client sent for one envelope field.
type fieldState uint8

const (
	fieldAbsent  fieldState = iota // missing or null
	fieldSet                       // a value of the right JSON type
	fieldInvalid                   // a value of the wrong type, or bad JSON in a form field
)

// field is one envelope field: the unescaped string of resource/action/version, or the raw JSON
// object of params/meta. Values may point into the request body.
type field struct {
	val   []byte
	state fieldState
}

// envelope is the decoded request envelope of wire-core §1.3.
type envelope struct {
	resource, action, version field
	params, meta              field
	form                      bool // read from multipart: params/meta errors use their own codes
}

// decodeEnvelope is step 2: the JSON or multipart envelope, then the field checks. Any other
// media type answers 415/1300 (wire-core §1.2).
func (e *Engine) decodeEnvelope(q *request) error {
	switch q.kind {
	case kindJSON:
		if err := decodeEnvelopeJSON(q.body, &q.env); err != nil {
			return err
		}
	case kindMultipart:
		if err := e.readMultipart(q); err != nil {
			return err
		}
	default:
		return ErrUnsupportedMediaType
	}
	return q.env.validate()
}

// decodeEnvelopeJSON reads a JSON envelope: encoding/json decodes the top-level object into raw
// values (malformed or empty → 400/1400, svc's deviation from the original's 500; params and
// meta stay raw and keep every digit of their numbers), then each known key's value is checked
// for its type. Unknown keys are ignored; with duplicate keys the last wins.
func decodeEnvelopeJSON(b []byte, env *envelope) error {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return ErrInvalidRequestBody
	}
	for k, v := range m {
		env.setField(k, v)
	}
	return nil
}

// setField stores the value of the top-level key name.
func (env *envelope) setField(name string, val []byte) {
	switch name {
	case "resource":
		env.resource = stringField(val)
	case "action":
		env.action = stringField(val)
	case "version":
		env.version = stringField(val)
	case "params":
		env.params = objectField(val)
	case "meta":
		env.meta = objectField(val)
	}
}

func stringField(val []byte) field {
	switch val[0] {
	case 'n':
		return field{}
	case '"':
		s := val[1 : len(val)-1]
		if bytes.IndexByte(s, '\\') >= 0 {
			var u string
			if json.Unmarshal(val, &u) != nil {
				return field{state: fieldInvalid}
			}
			s = []byte(u)
		}
		return field{val: s, state: fieldSet}
	}
	return field{state: fieldInvalid}
}

func objectField(val []byte) field {
	switch val[0] {
	case 'n':
		return field{}
	case '{':
		return field{val: val, state: fieldSet}
	}
	return field{state: fieldInvalid}
}

// validate applies the envelope rules of wire-core §1.3: resource, action and version are
// required and limited to their character sets (400/1400 naming the field); params and meta,
// when present, are objects.
func (env *envelope) validate() error {
	if err := checkName("resource", env.resource, true, true); err != nil {
		return err
	}
	if err := checkName("action", env.action, true, false); err != nil {
		return err
	}
	if err := checkName("version", env.version, false, false); err != nil {
		return err
	}
	if env.params.state == fieldInvalid {
		if env.form {
			return ErrInvalidRequestParams
		}
		return ErrValidationInvalid.WithArgs("field", "params")
	}
	if env.meta.state == fieldInvalid {
		if env.form {
			return ErrInvalidRequestMeta
		}
		return ErrValidationInvalid.WithArgs("field", "meta")
	}
	return nil
}

// checkName enforces "required" and the validator tags of the original: alphanum_us_slash for
// resource, alphanum_us for action, alphanum for version.
func checkName(name string, f field, underscore, slash bool) error {
	if f.state == fieldInvalid {
		return ErrValidationInvalid.WithArgs("field", name)
	}
	if len(f.val) == 0 {
		return ErrValidationRequired.WithArgs("field", name)
	}
	for _, c := range f.val {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '_' && underscore, c == '/' && slash:
		default:
			return ErrValidationInvalid.WithArgs("field", name)
		}
	}
	return nil
}

// rawOrEmpty returns the raw params or meta object, {} when absent (wire-core §1.3).
func (f field) rawOrEmpty() json.RawMessage {
	if f.state != fieldSet {
		return emptyObject
	}
	return f.val
}

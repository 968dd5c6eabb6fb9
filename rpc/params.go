package rpc

import (
	"bytes"
	"encoding/json"
)

// decodeParams decodes raw params into p. Absent, empty or null params leave p at its zero value
// (spec §2.1: params may be omitted). Untyped numbers decode as json.Number so ids above 2^53
// keep their digits; unknown keys are ignored (wire-core §1.3).
func decodeParams[P any](raw json.RawMessage, p *P) error {
	if _, none := any(p).(*NoParams); none {
		return nil
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(p); err != nil {
		return ErrInvalidRequestParams.Wrap(err)
	}
	return nil
}

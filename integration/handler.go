package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Boot errors of handler registration (wire-integration §6).
var (
	// ErrBlankHandlerContract: an inbound handler was registered without a contract code.
	ErrBlankHandlerContract = errors.New("integration: inbound handler with a blank contract code")
	// ErrDuplicateHandlerContract: two inbound handlers were registered for one contract code.
	ErrDuplicateHandlerContract = errors.New("integration: two inbound handlers for one contract")
)

// InboundHandler is the host's business handler of one contract's inbound deliveries, called
// by the adapter script's dispatch(input) with schema-checked JSON. Vendors deliver at least
// once, so handlers must be idempotent.
type InboundHandler interface {
	// Contract is the contract code the handler serves.
	Contract() string
	// Handle processes one dispatched input and returns the output.
	Handle(ctx context.Context, input json.RawMessage) (json.RawMessage, error)
}

// NewInboundHandler returns the handler of contract calling fn with the input decoded into I;
// its output is encoded as JSON (typed through a JSON round trip). An input that does not
// decode into I is an input_invalid failure.
func NewInboundHandler[I, O any](contract string, fn func(ctx context.Context, input I) (O, error)) InboundHandler {
	return typedHandler[I, O]{contract: contract, fn: fn}
}

type typedHandler[I, O any] struct {
	contract string
	fn       func(ctx context.Context, input I) (O, error)
}

func (h typedHandler[I, O]) Contract() string { return h.contract }

func (h typedHandler[I, O]) Handle(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var in I
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, &kindError{kind: KindInputInvalid, err: detail(ErrInputInvalid, err.Error())}
	}
	out, err := h.fn(ctx, in)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// handlerRegistry indexes the handlers by contract code; blank and duplicate codes fail.
func handlerRegistry(hs []InboundHandler) (map[string]InboundHandler, error) {
	m := make(map[string]InboundHandler, len(hs))
	for _, h := range hs {
		c := strings.TrimSpace(h.Contract())
		if c == "" {
			return nil, ErrBlankHandlerContract
		}
		if _, dup := m[c]; dup {
			return nil, fmt.Errorf("%w: %s", ErrDuplicateHandlerContract, c)
		}
		m[c] = h
	}
	return m, nil
}

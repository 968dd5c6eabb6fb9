package event

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
)

// SubscribeTyped subscribes h to the event type of T. In-process deliveries hand h the published
// value; deliveries that crossed a process (RawPayload) are decoded from JSON into T. T must be
// a concrete type whose zero value (or, for a pointer type, a new value) names the event type;
// an interface type fails with ErrNilTypeParameter.
func SubscribeTyped[T Event](s Subscriber, h func(ctx context.Context, env *Envelope, payload T) error, opts ...SubscribeOption) (Unsubscribe, error) {
	eventType, err := typeOf[T]()
	if err != nil {
		return nil, err
	}
	return s.Subscribe(eventType, func(ctx context.Context, env *Envelope) error {
		p, err := decodePayload[T](env)
		if err != nil {
			return err
		}
		return h(ctx, env, p)
	}, opts...)
}

// typeOf asks a zero T for its event type.
func typeOf[T Event]() (string, error) {
	rt := reflect.TypeFor[T]()
	switch rt.Kind() {
	case reflect.Interface:
		return "", fmt.Errorf("%w: %s", ErrNilTypeParameter, rt)
	case reflect.Pointer:
		return reflect.New(rt.Elem()).Interface().(T).EventType(), nil
	}
	var zero T
	return zero.EventType(), nil
}

// DecodePayload returns env's payload as T: the value itself in process (also inside Named), or
// T decoded from the JSON of a payload that crossed a transport (RawPayload) or has another Go
// type; ErrUnknownPayload when it does not decode. SubscribeTyped decodes with it; a handler
// subscribed to several types of one payload shape calls it directly.
func DecodePayload[T any](env *Envelope) (T, error) { return decodePayload[T](env) }

// decodePayload returns env's payload as T.
func decodePayload[T any](env *Envelope) (T, error) {
	var zero T
	switch p := env.Payload.(type) {
	case T:
		return p, nil
	case Named:
		if v, ok := p.Payload.(T); ok {
			return v, nil
		}
		body, err := json.Marshal(p.Payload)
		if err != nil {
			return zero, fmt.Errorf("%w: %s: %w", ErrUnknownPayload, env.Type, err)
		}
		return decodePayload[T](&Envelope{Type: env.Type, Payload: RawPayload{Type: p.Type, Body: body}})
	case RawPayload:
		rt := reflect.TypeFor[T]()
		if rt.Kind() == reflect.Pointer {
			v := reflect.New(rt.Elem())
			if err := json.Unmarshal(p.Body, v.Interface()); err != nil {
				return zero, fmt.Errorf("%w: %s: %w", ErrUnknownPayload, env.Type, err)
			}
			return v.Interface().(T), nil
		}
		var out T
		if err := json.Unmarshal(p.Body, &out); err != nil {
			return zero, fmt.Errorf("%w: %s: %w", ErrUnknownPayload, env.Type, err)
		}
		return out, nil
	default:
		return zero, fmt.Errorf("%w: %s payload %T", ErrUnknownPayload, env.Type, env.Payload)
	}
}

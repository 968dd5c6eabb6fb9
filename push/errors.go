package push

import (
	"errors"
	"net/http"

	"github.com/svc-framework/svc/rpc"
)

// Business codes of the push module. The Notifier returns them only for invalid input
// (wire-runtime §3.3); they reach a client only through host code that forwards them.
const (
	ErrCodeTypeRequired      = 2800
	ErrCodeNoTarget          = 2801
	ErrCodeUnknownTargetKind = 2802
)

// Errors of the Notifier (wire-runtime §3.3) and of the handshake. Compare with errors.Is.
var (
	// ErrTypeRequired: a message without a type (2800).
	ErrTypeRequired = rpc.NewError(ErrCodeTypeRequired, http.StatusBadRequest, "push_type_required")
	// ErrNoTarget: no target, or a users / roles target without values (2801).
	ErrNoTarget = rpc.NewError(ErrCodeNoTarget, http.StatusBadRequest, "push_no_target")
	// ErrUnknownTargetKind: a target kind other than users, roles and broadcast (2802).
	ErrUnknownTargetKind = rpc.NewError(ErrCodeUnknownTargetKind, http.StatusBadRequest, "push_unknown_target_kind")
	// ErrTokenRequired: a handshake without an access token, answered like an invalid one
	// (HTTP 401, code 1003, wire-runtime §3.1).
	ErrTokenRequired = rpc.NewError(rpc.CodeTokenInvalid, http.StatusUnauthorized, "push_token_required")
)

// Startup errors.
var (
	// ErrAppNameRequired: the relay is on (push and the key-value store enabled) but svc.app.name
	// is empty, so nodes of different applications would share one channel (spec §6.2).
	ErrAppNameRequired = errors.New("push: the cross-node relay needs svc.app.name")
	// ErrRelayRequired: `svc push send` without the key-value store: a separate process reaches
	// the running nodes' sockets only through the relay.
	ErrRelayRequired = errors.New("push: sending from outside the server needs the relay (svc.kvstore.enabled = true)")
	// ErrDisabled: `svc push send` while svc.push.enabled is false: no node holds sockets.
	ErrDisabled = errors.New("push: svc.push.enabled is false")
)

package push

import "slices"

// Target kinds (wire-runtime §3.3).
const (
	KindUsers     = "users"
	KindRoles     = "roles"
	KindBroadcast = "broadcast"
)

// Target selects recipients: the connections of some users, of principals holding some roles
// (their roles at the handshake), or every connection. Targets of one push are united: each
// connection gets the message at most once.
type Target struct {
	Kind   string   `json:"kind"`
	Values []string `json:"values,omitempty"`
}

// ToUsers targets every connection of the principal ids.
func ToUsers(ids ...string) Target { return Target{Kind: KindUsers, Values: ids} }

// ToRoles targets every connection whose principal held one of the roles at the handshake.
func ToRoles(roles ...string) Target { return Target{Kind: KindRoles, Values: roles} }

// Broadcast targets every connection.
func Broadcast() Target { return Target{Kind: KindBroadcast} }

// validate checks targets: at least one, known kinds, values for users and roles.
func validate(targets []Target) error {
	if len(targets) == 0 {
		return ErrNoTarget
	}
	for _, t := range targets {
		switch t.Kind {
		case KindBroadcast:
		case KindUsers, KindRoles:
			if !slices.ContainsFunc(t.Values, func(v string) bool { return v != "" }) {
				return ErrNoTarget
			}
		default:
			return ErrUnknownTargetKind
		}
	}
	return nil
}

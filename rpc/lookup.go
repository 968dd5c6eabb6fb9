package rpc

// lookup is step 3: one map hit on (resource, action, version). The key is assembled in a stack
// buffer and the map is indexed with a string conversion the compiler does not allocate for.
// An unknown triple answers 404/1200 before any authentication (wire-core §1.1: the original
// resolves the operation before its auth middleware runs).
func (e *Engine) lookup(q *request) error {
	var buf [128]byte
	key := routeKey(buf[:0], q.env.resource.val, q.env.action.val, q.env.version.val)
	rt := e.routes[string(key)]
	if rt == nil {
		return ErrNotFound
	}
	q.route = rt
	e.observeResolved(q)
	return nil
}

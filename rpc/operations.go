package rpc

import (
	"cmp"
	"reflect"
	"slices"
)

// OperationInfo describes one registered operation for code that lists them, such as the MCP
// endpoint, which offers the operations a caller may run as tools.
type OperationInfo struct {
	Resource   string
	Action     string
	Version    string
	Public     bool
	Permission string       // the RequiredPermission token, "" when none
	Strategy   string       // the resolved authentication strategy ("none" for public operations)
	Audit      bool         // the operation emits audit records
	HTTPOnly   bool         // served only over /api: Engine.Call answers 404 (the HTTPOnly option)
	Params     reflect.Type // the params type (Handle's P); nil when unknown
	Result     reflect.Type // the result type (Handle's R), the envelope's data; nil when unknown
}

// Operations lists every registered operation ordered by resource, action and version. It
// freezes the engine like the first request does, so the list is final.
func (e *Engine) Operations() []OperationInfo {
	e.freeze()
	out := make([]OperationInfo, 0, len(e.routes))
	for _, rt := range e.routes {
		out = append(out, OperationInfo{
			Resource: rt.resource, Action: rt.action, Version: rt.version,
			Public: rt.op.Public, Permission: rt.op.Permission, Strategy: rt.strategy,
			Audit: rt.op.Audit, HTTPOnly: rt.op.HTTPOnly, Params: rt.op.Params,
			Result: rt.op.Result,
		})
	}
	slices.SortFunc(out, func(a, b OperationInfo) int {
		return cmp.Or(cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Action, b.Action),
			cmp.Compare(a.Version, b.Version))
	})
	return out
}

// DefaultStrategy returns the strategy of operations that name none (EngineConfig.DefaultStrategy).
func (e *Engine) DefaultStrategy() string { return e.cfg.DefaultStrategy }

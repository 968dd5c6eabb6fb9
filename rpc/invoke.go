package rpc

import (
	"context"
	"errors"
	"log/slog"
)

// invoke is steps 7 and 8: Op.Invoke decodes and validates the params and calls the handler,
// all under the operation's timeout (DefaultTimeout unless declared).
//
// The handler runs on the request goroutine, so it may stream the request body (multipart file
// parts) and set response headers without races; the timeout reaches it through ctx. When the
// deadline has passed by the time the handler returns, the answer is 408/1402 whatever it
// returned (wire-core §1.4). A panic answers 500/1900 and is logged with its stack; a body that
// grew past the limit while the handler streamed it answers 413.
func (e *Engine) invoke(q *request) (data any, err error) {
	rt := q.route
	ctx, cancel := context.WithTimeout(q.ctx, rt.timeout)
	defer cancel()
	c := Call{
		Resource:  rt.resource,
		Action:    rt.action,
		Version:   rt.version,
		Principal: q.principal,
		ClientIP:  q.clientIP,
		RequestID: q.id,
		Meta:      q.env.meta.rawOrEmpty(),
		Request:   q.r,
		Header:    q.w.Header(),
		Logger:    e.requestLogger(q),
	}
	if q.files != nil {
		c.Files = q.files
	}
	data, err = e.call(ctx, q, c)
	switch {
	case q.limited != nil && q.limited.exceeded:
		return nil, ErrBodyTooLarge
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && q.ctx.Err() == nil:
		return nil, ErrRequestTimeout.Wrap(err)
	}
	return data, err
}

// call runs Op.Invoke and turns a panic into ErrUnknown. http.ErrAbortHandler keeps its meaning
// (abort the response) and is re-raised.
func (e *Engine) call(ctx context.Context, q *request, c Call) (data any, err error) {
	defer func() {
		if e.recovered(q, recover()) {
			data, err = nil, ErrUnknown
		}
	}()
	return q.route.op.Invoke(ctx, c, q.env.params.rawOrEmpty())
}

// requestLogger is the handler's logger: the engine's, with request_id, resource, action and
// version attached lazily (nothing is formatted unless something is logged). The logger and its
// handler share one allocation.
func (e *Engine) requestLogger(q *request) *slog.Logger {
	l := &requestLog{handler: requestLogHandler{
		inner:    e.log.Handler(),
		id:       q.id,
		resource: q.route.resource,
		action:   q.route.action,
		version:  q.route.version,
	}}
	l.logger = *slog.New(&l.handler)
	return &l.logger
}

// requestLog holds a request logger next to its handler.
type requestLog struct {
	logger  slog.Logger
	handler requestLogHandler
}

// requestLogHandler adds the request attributes to each record it handles.
type requestLogHandler struct {
	inner                         slog.Handler
	id, resource, action, version string
}

func (h *requestLogHandler) attrs() []slog.Attr {
	return []slog.Attr{
		slog.String("request_id", h.id),
		slog.String("resource", h.resource),
		slog.String("action", h.action),
		slog.String("version", h.version),
	}
}

// Enabled defers to the engine's handler.
func (h *requestLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

// Handle adds the request attributes to a copy of r.
func (h *requestLogHandler) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(h.attrs()...)
	return h.inner.Handle(ctx, r)
}

// WithAttrs materialises the request attributes first, so they stay outside later groups.
func (h *requestLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return h.inner.WithAttrs(h.attrs()).WithAttrs(as)
}

// WithGroup materialises the request attributes first, so they stay outside the group.
func (h *requestLogHandler) WithGroup(name string) slog.Handler {
	return h.inner.WithAttrs(h.attrs()).WithGroup(name)
}

package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"strconv"
	"sync"
	"unicode/utf8"
)

// ErrMethodNotAllowed answers a method other than POST on /api: HTTP 405 with code 1900, the
// code the original's error handler gives every HTTP status it does not map (wire-core §1.1, §1.5).
var ErrMethodNotAllowed = NewError(CodeUnknown, http.StatusMethodNotAllowed, "method_not_allowed")

// StatusClientClosedRequest is the status of a request its client abandoned (nginx's 499, not
// an HTTP status a client can receive: it is gone). The renderer writes it, so the access log,
// the /api metrics and traces, and the audit record all see 499: a 4xx, the client's doing,
// never counted as a server error (issue #42 item 8).
const StatusClientClosedRequest = 499

// ErrClientClosedRequest is what the renderer makes of any error that is the client going away
// (see ClientAborted): 499 with code 1900, logged at debug level with its cause.
var ErrClientClosedRequest = NewError(CodeUnknown, StatusClientClosedRequest, "client_closed_request")

// ClientAborted reports whether err, returned while serving a request whose context is ctx, is
// the client going away: err is or wraps context.Canceled and ctx is done (net/http cancels a
// request's context when its connection fails or closes, or its HTTP/2 stream is reset; the
// server never cancels it while the handler runs otherwise). It holds wherever the error comes
// from — a body read, a wait for the body budget, a handler's database or storage call, a
// strategy — and whatever wraps it, an *Error with a 5xx status included; a deadline
// (context.DeadlineExceeded) is not an abort.
func ClientAborted(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled)
}

var (
	contentTypeJSON = []string{"application/json; charset=utf-8"}
	// maxPooledBuffer: larger render buffers are dropped instead of pooled.
	maxPooledBuffer = 64 << 10
	// chunkingThreshold: net/http computes Content-Length itself for smaller bodies written in
	// one call; larger ones get it set explicitly instead of chunked encoding.
	chunkingThreshold = 2048
)

// renderBuffer is a pooled envelope buffer with its JSON encoder and a scratch area for the
// protected transport.
type renderBuffer struct {
	buf     bytes.Buffer
	enc     *json.Encoder
	scratch []byte
	wire    []byte
}

var renderPool = sync.Pool{New: func() any {
	b := new(renderBuffer)
	b.enc = json.NewEncoder(&b.buf)
	return b
}}

// respond writes a success envelope (step 9).
func (e *Engine) respond(q *request, status int, data any) {
	msg := ""
	if k := q.route.op.SuccessKey; k != "" {
		msg = e.msgs.T(k, nil)
	}
	e.writeEnvelope(q.w, q.ctx, q.id, status, CodeOK, msg, data, e.protect)
	q.wrote, q.status, q.code, q.result = true, status, CodeOK, data
}

// fail renders err through the one renderer (step 9).
func (e *Engine) fail(q *request, err error) {
	status, code := e.writeError(q.w, q.ctx, q.id, err, e.protect)
	q.wrote, q.status, q.code = true, status, code
}

// WriteError renders err as the envelope for routes outside /api (download proxy, /ws, /mcp):
// an *Error anywhere in err's chain gives its status, code and message (its literal Message, or
// its Key and Args in the process-wide language) and its Data; anything else answers 500/1900
// and is logged with the request id, never sent. The protected transport does not apply outside
// /api.
func (e *Engine) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	e.writeError(w, r.Context(), RequestInfoFrom(r.Context()).ID, err, nil)
}

// WriteData renders a success envelope {"code":0,"message":<ok>,"data":data} with status.
func (e *Engine) WriteData(w http.ResponseWriter, r *http.Request, status int, data any) {
	e.writeEnvelope(w, r.Context(), RequestInfoFrom(r.Context()).ID, status, CodeOK, "", data, nil)
}

// writeError resolves err and writes it; it returns the status and code written.
func (e *Engine) writeError(w http.ResponseWriter, ctx context.Context, id string, err error, codec *BodyCodec) (int, int) {
	if ClientAborted(ctx, err) {
		e.log.LogAttrs(ctx, slog.LevelDebug, "rpc: client closed request", slog.String("request_id", id), slog.Any("error", err))
		err = ErrClientClosedRequest
	}
	re, ok := AsError(err)
	if !ok {
		e.logInternal(ctx, id, err)
		re = ErrUnknown
	} else if re.HTTPStatus() >= http.StatusInternalServerError && re.Unwrap() != nil {
		e.logInternal(ctx, id, re.Unwrap())
	}
	msg := re.Message
	if msg == "" {
		msg = e.msgs.T(re.Key, re.Args)
	}
	status := re.HTTPStatus()
	e.writeEnvelope(w, ctx, id, status, re.Code, msg, re.Data, codec)
	return status, re.Code
}

// logInternal logs the cause of a 500. A client that went away is not a server fault: it is
// logged at debug level.
func (e *Engine) logInternal(ctx context.Context, id string, err error) {
	level := slog.LevelError
	if ctx.Err() != nil {
		level = slog.LevelDebug
	}
	e.log.LogAttrs(ctx, level, "rpc: internal error", slog.String("request_id", id), slog.Any("error", err))
}

// writeEnvelope encodes {"code","message","data"} into a pooled buffer, encrypts it when codec is
// set, and writes it with one Write. An empty msg with code 0 uses the prepared success head.
// Data that cannot be encoded turns into 500/1900.
func (e *Engine) writeEnvelope(w http.ResponseWriter, ctx context.Context, id string, status, code int, msg string, data any, codec *BodyCodec) {
	b := renderPool.Get().(*renderBuffer)
	defer putRenderBuffer(b)
	b.buf.Reset()
	if code == CodeOK && msg == "" {
		b.buf.Write(e.okPrefix)
	} else {
		b.buf.Write(appendEnvelopeHead(b.buf.AvailableBuffer(), code, msg))
	}
	if err := encodeData(b, data); err != nil {
		e.logInternal(ctx, id, err)
		b.buf.Reset()
		status, code = http.StatusInternalServerError, CodeUnknown
		b.buf.Write(appendEnvelopeHead(b.buf.AvailableBuffer(), code, e.msgs.T(ErrUnknown.Key, nil)))
		b.buf.WriteString("null")
	}
	b.buf.WriteByte('}')
	body := b.buf.Bytes()
	h := w.Header()
	h["Content-Type"] = contentTypeJSON
	if codec != nil {
		b.wire = codec.appendSeal(b.wire[:0], &b.scratch, body)
		body = b.wire
		h[HeaderBodyEncoding] = codec.header
	}
	if len(body) >= chunkingThreshold {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	w.WriteHeader(status)
	w.Write(body)
}

func putRenderBuffer(b *renderBuffer) {
	if b.buf.Cap() > maxPooledBuffer || cap(b.wire) > maxPooledBuffer || cap(b.scratch) > maxPooledBuffer {
		return
	}
	renderPool.Put(b)
}

// encodeData appends the JSON of data: null for nil, raw JSON verbatim after a validity check,
// else through encoding/json.
func encodeData(b *renderBuffer, data any) error {
	switch v := data.(type) {
	case nil:
		b.buf.WriteString("null")
		return nil
	case json.RawMessage:
		if len(v) == 0 {
			b.buf.WriteString("null")
			return nil
		}
		if !json.Valid(v) {
			return &json.SyntaxError{}
		}
		b.buf.Write(v)
		return nil
	}
	mark := b.buf.Len()
	if err := b.enc.Encode(data); err != nil {
		b.buf.Truncate(mark)
		return err
	}
	b.buf.Truncate(b.buf.Len() - 1) // the encoder's newline
	return nil
}

// appendEnvelopeHead appends `{"code":<code>,"message":<msg>,"data":`.
func appendEnvelopeHead(dst []byte, code int, msg string) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, msg)
	return append(dst, `,"data":`...)
}

// appendJSONString appends s as a JSON string exactly as encoding/json's default (HTML-safe)
// encoding does: <, > and & as \u003c…, \b \f \n \r \t by their short escapes, other control
// bytes as \u00XX, invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

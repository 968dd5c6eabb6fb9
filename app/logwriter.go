package app

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logFlushInterval bounds how long an info line may sit in the buffer.
const logFlushInterval = 100 * time.Millisecond

// LogWriter buffers log output so the access log costs no system call per request. Lines are
// written out every 100 ms while the flusher runs (Start to Close), at once for records at warn
// level and above (see NewLogger), and on Flush and Close. A crash can lose at most the last
// 100 ms of info lines.
type LogWriter struct {
	mu   sync.Mutex
	buf  *bufio.Writer
	stop chan struct{} // nil while no flusher runs
	done chan struct{}
}

// NewLogWriter returns a buffered writer over w. It starts no goroutine: the owner runs the
// periodic flusher from Start to Close, so a writer that is never started leaks nothing.
func NewLogWriter(w io.Writer) *LogWriter {
	return &LogWriter{buf: bufio.NewWriterSize(w, 64<<10)}
}

// Start runs the background flusher until Close; it does nothing when the flusher runs already.
func (lw *LogWriter) Start() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.stop != nil {
		return
	}
	lw.stop, lw.done = make(chan struct{}), make(chan struct{})
	go lw.loop(lw.stop, lw.done)
}

// Write buffers p. slog handlers write one whole record per call, so lines never interleave.
func (lw *LogWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.buf.Write(p)
}

// Flush writes the buffered lines out.
func (lw *LogWriter) Flush() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.buf.Flush()
}

// Close stops the background flusher, if it runs, and flushes what is left; it may be called
// more than once. Writes after Close still reach the buffer but are only written by a later
// Flush, Close or Start.
func (lw *LogWriter) Close() error {
	lw.mu.Lock()
	stop, done := lw.stop, lw.done
	lw.stop, lw.done = nil, nil
	lw.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	return lw.Flush()
}

func (lw *LogWriter) loop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(logFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			_ = lw.Flush()
		}
	}
}

// NewLogger returns a JSON logger at level writing through lw; records at warn level and above
// are flushed at once so problems are never delayed or lost in a buffer.
func NewLogger(lw *LogWriter, level slog.Level) *slog.Logger {
	return slog.New(flushingHandler{
		Handler: slog.NewJSONHandler(lw, &slog.HandlerOptions{Level: level}),
		lw:      lw,
	})
}

type flushingHandler struct {
	slog.Handler
	lw *LogWriter
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		_ = h.lw.Flush()
	}
	return err
}

func (h flushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushingHandler{Handler: h.Handler.WithAttrs(attrs), lw: h.lw}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{Handler: h.Handler.WithGroup(name), lw: h.lw}
}

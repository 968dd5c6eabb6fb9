package app

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestLoggerFlushesWarningsAtOnceAndInfoOnClose(t *testing.T) {
	var out lockedBuffer
	lw := NewLogWriter(&out)
	log := NewLogger(lw, slog.LevelInfo).With("app", "t")
	log.Info("quiet line")
	log.Warn("loud line")
	if got := out.String(); !strings.Contains(got, "loud line") || !strings.Contains(got, "quiet line") {
		t.Errorf("after a warning the buffer holds %q, want both lines written (in order)", got)
	}
	log.Info("last line")
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "last line") {
		t.Errorf("after Close the output is %q, want the last info line flushed", got)
	}
	if strings.Count(out.String(), "\n") != 3 {
		t.Errorf("output %q, want exactly three lines", out.String())
	}
}

package storage

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestPartReader covers the streaming size rules: exact parts, the last part, and the probe
// after a backend that stops at a known length.
func TestPartReader(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name    string
		body    int
		exact   bool
		stopAt  int // the backend reads this many bytes then stops (0: reads to EOF)
		failed  bool
		want    error
		wantLen int
	}{
		{"exact part", 10, true, 0, false, nil, 10},
		{"exact part one byte short", 9, true, 0, false, ErrUploadPartTooSmall, 9},
		{"exact part one byte long", 11, true, 0, false, ErrUploadPartTooLarge, 10},
		{"last part smaller", 4, false, 0, false, nil, 4},
		{"empty last part", 0, false, 0, false, ErrUploadPartTooSmall, 0},
		{"last part too large", 11, false, 0, false, ErrUploadPartTooLarge, 10},
		{"backend stops at the length, body ends there", 10, true, 10, false, nil, 10},
		{"backend stops at the length, body goes on", 12, true, 10, false, ErrUploadPartTooLarge, 10},
		{"backend failed half-way", 10, true, 5, true, nil, 5},
	}
	for _, tt := range rows {
		pr := newPartReader(bytes.NewReader(make([]byte, tt.body)), 10, tt.exact)
		var got []byte
		var err error
		if tt.stopAt > 0 {
			got = make([]byte, tt.stopAt)
			_, err = io.ReadFull(pr, got)
		} else {
			got, err = io.ReadAll(pr)
		}
		if err != nil && !errors.Is(err, errPartTooLarge) && !errors.Is(err, errPartTooSmall) {
			t.Fatalf("%s: read error %v", tt.name, err)
		}
		if cerr := pr.check(!tt.failed); !errors.Is(cerr, tt.want) || (tt.want == nil && cerr != nil) {
			t.Errorf("%s: check = %v, want %v", tt.name, cerr, tt.want)
		}
		if len(got) != tt.wantLen {
			t.Errorf("%s: the backend got %d bytes, want %d", tt.name, len(got), tt.wantLen)
		}
	}
}

package backend

import (
	"errors"
	"strings"
	"testing"
)

// TestValidKey covers the key rules of wire-core §7.7: a key containing ".." anywhere is
// refused, not only a ".." segment.
func TestValidKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		key  string
		want bool
	}{
		{"planned private key", "priv/2026/07/10/0190a3c5-7b1e-7c3d-8e4f-5a6b7c8d9e0f.pdf", true},
		{"planned public key", "pub/2026/07/10/0190a3c5-7b1e-7c3d-8e4f-5a6b7c8d9e0f.bin", true},
		{"dots that are not ..", "a.b/c.d.e/.f", true},
		{"longest key", strings.Repeat("a", MaxKeyLength), true},
		{"empty", "", false},
		{"too long", strings.Repeat("a", MaxKeyLength+1), false},
		{"absolute", "/abs/key", false},
		{"empty segment", "a//b", false},
		{"trailing slash", "a/b/", false},
		{". segment", "a/./b", false},
		{"leading . segment", "./a", false},
		{".. segment", "a/../b", false},
		{"leading ..", "../escape", false},
		{".. inside a segment", "a..b", false},
		{".. before an extension", "priv/x..pdf", false},
		{".. at the end", "pub/x..", false},
		{".. at a segment start", "pub/..x", false},
		{"three dots", "pub/.../x", false},
		{"backslash", `a\b`, false},
		{"NUL", "a\x00b", false},
		{"newline", "a\nb", false},
		{"DEL", "a\x7fb", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ValidKey(tt.key); got != tt.want {
				t.Errorf("ValidKey(%q) = %v, want %v", tt.key, got, tt.want)
			}
			if err := CheckKey(tt.key); (err == nil) != tt.want || (err != nil && !errors.Is(err, ErrInvalidKey)) {
				t.Errorf("CheckKey(%q) = %v, want valid %v", tt.key, err, tt.want)
			}
		})
	}
}

package integration

import (
	"math"
	"testing"
)

// TestMaskerLine: a console line holding a secret's letters and digits in order, whatever
// separates them, is masked whole; a line without them, and a secret too short to be looked
// for that way, are left as they are.
func TestMaskerLine(t *testing.T) {
	t.Parallel()
	m := newMasker(nil, math.MaxInt, []string{"tok-8c1f2e9a77", "pin-42"})
	for _, tt := range []struct{ name, in, want string }{
		{"pieces", "tok-8c1f 2e9a77", MaskedSecret},
		{"spaced", "t o k - 8 c 1 f 2 e 9 a 7 7", MaskedSecret},
		{"upper with text", "before TOK-8C1F2E9A77 after", MaskedSecret},
		{"other separators", "x=tok|8c1f|2e9a|77;", MaskedSecret},
		{"part only", "tok-8c1f", "tok-8c1f"},
		{"ordinary text", "delivery p1 stored", "delivery p1 stored"},
		{"short secret is literal only", "p i n 4 2", "p i n 4 2"},
	} {
		if got := m.line(tt.in); got != tt.want {
			t.Errorf("%s: line(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	if got := newMasker(nil, math.MaxInt, nil).line("anything"); got != "anything" {
		t.Errorf("no secrets: line = %q", got)
	}
}

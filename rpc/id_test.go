package rpc

import (
	"regexp"
	"testing"

	"github.com/google/uuid"
)

// TestNewIDAliases: rpc's exported names return the one generator's two forms (internal/id tests
// the generator itself).
func TestNewIDAliases(t *testing.T) {
	t.Parallel()
	if u, err := uuid.Parse(NewID()); err != nil || u.Version() != 7 {
		t.Errorf("NewID() = %v (parse error %v), want a UUIDv7", u, err)
	}
	if s := NewShortID(); !regexp.MustCompile(`^[0-9a-v]{20}$`).MatchString(s) {
		t.Errorf("NewShortID() = %q, want 20 characters [0-9a-v]", s)
	}
}

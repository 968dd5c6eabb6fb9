package memory_test

import (
	"testing"

	"github.com/svc-framework/svc/storage/backend"
	"github.com/svc-framework/svc/storage/backend/backendtest"
	"github.com/svc-framework/svc/storage/memory"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, func(t *testing.T) backend.Backend { return memory.New(nil) })
}

package waitgroup

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// TestWait: nil once the group is done, the context's error when it ends first.
func TestWait(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	if err := Wait(context.Background(), &wg); err != nil {
		t.Errorf("empty group: %v, want nil", err)
	}
	release := make(chan struct{})
	wg.Go(func() { <-release })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Wait(ctx, &wg); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled wait: %v, want context.Canceled", err)
	}
	close(release)
	if err := Wait(context.Background(), &wg); err != nil {
		t.Errorf("finished group: %v, want nil", err)
	}
}

package backup

import (
	"runtime"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/svc-framework/svc/internal/bypass"
)

// threadNice answers the nice value of the calling goroutine's current thread (the goroutine is
// locked to it while it reads).
func threadNice(t *testing.T) int {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p // the raw system call answers 20 − nice
}

// TestLowerPriorityThreadIsDiscarded guards the bypass backup.nice: the backup goroutine's
// thread runs at backgroundNice, and when that goroutine ends the thread goes with it, so no
// other goroutine ever runs on a lowered thread. With SVC_BYPASS_OFF listing it nothing changes.
func TestLowerPriorityThreadIsDiscarded(t *testing.T) {
	base := threadNice(t)
	got := make(chan int)
	go func() {
		lowered := lowerPriority()
		p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
		if err != nil || lowered != bypass.On(bypass.BackupNice) {
			got <- -100
			return
		}
		got <- 20 - p
	}()
	want := base
	if bypass.On(bypass.BackupNice) {
		want = backgroundNice
	}
	if n := <-got; n != want {
		t.Fatalf("backup thread nice = %d, want %d (bypass on: %v)", n, want, bypass.On(bypass.BackupNice))
	}
	// Many goroutines afterwards, each reading its own thread: none may find the lowered one.
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int]int{}
	for range 200 {
		wg.Go(func() {
			n := threadNice(t)
			mu.Lock()
			seen[n]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(seen) != 1 || seen[base] != 200 {
		t.Fatalf("threads' nice values after the backup goroutine ended: %v, want all %d", seen, base)
	}
}

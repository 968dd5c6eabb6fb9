// Package startmem gives back the memory the ready binary needed only while it started.
//
// Starting `svc serve` runs the initialisers of about 325 packages and builds every module. The
// garbage of that work stays in the heap until a collection that, at the binary's GOGC 400,
// an idle server may never reach; and the initialisers, spread over 26 MiB of code, map about
// 34 MiB of the executable into the process (the kernel maps the neighbours of each page fault
// too, 64 KiB at a time), of which the running server uses about half. Release collects the
// garbage and returns it to the operating system, and drops the process's mappings of the
// executable's read-only pages; the pages the server uses afterwards are mapped again on their
// first use from the page cache, a minor fault without I/O (docs/performance.md, "Memory").
//
// Only the ready binary calls it (cmd/svc, once svc.Server has started); library hosts keep
// their memory as they arrange it. Dropping the mappings is a performance bypass
// (internal/bypass, "start.pages"): SVC_BYPASS_OFF=start.pages keeps them.
package startmem

import (
	"runtime/debug"

	"github.com/svc-framework/svc/internal/bypass"
)

// Result says what Release gave back.
type Result struct {
	// Mapped is the resident size, in bytes, of the executable's read-only mappings that were
	// dropped (0 where the bypass is off or the platform has no such call).
	Mapped int64
}

// Release collects the heap and returns its free memory to the operating system, then, unless
// the start.pages bypass is off, drops the process's mappings of the executable's read-only
// pages. It is safe to call while the server serves: nothing is lost, a dropped page is mapped
// again when it is next used.
func Release() (Result, error) {
	return release(bypass.On(bypass.StartPages))
}

func release(mappings bool) (Result, error) {
	debug.FreeOSMemory()
	if !mappings {
		return Result{}, nil
	}
	n, err := dropExecutablePages()
	return Result{Mapped: n}, err
}

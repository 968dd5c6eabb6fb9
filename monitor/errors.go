package monitor

import (
	"net/http"

	"github.com/svc-framework/svc/rpc"
)

// Business codes of the monitor (wire-core §2.4).
const (
	CodeNotReady         = 2100
	CodeCollectionFailed = 2101
)

// Error templates of sys/monitor; both answer HTTP 200 with the code in the body.
var (
	// ErrNotReady answers get_cpu and get_process before the sampler's first sample.
	ErrNotReady = rpc.NewError(CodeNotReady, http.StatusOK, "monitor_not_ready")
	// ErrCollectionFailed answers an action whose probe failed (the cause is logged, not sent).
	ErrCollectionFailed = rpc.NewError(CodeCollectionFailed, http.StatusOK, "monitor_collection_failed")
)

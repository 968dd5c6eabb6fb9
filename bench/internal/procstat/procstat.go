// Package procstat reads the calling process's resident set and CPU time from /proc, for the
// benchmark servers that report their own cost (bench/push/server, bench/peers/centrifuge).
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// RSS is the resident set size in bytes from /proc/self/statm (0 when it cannot be read).
func RSS() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, res uint64
	_, _ = fmt.Sscan(string(b), &size, &res)
	return res * uint64(os.Getpagesize())
}

// CPUSeconds is the process's user + system CPU time from /proc/self/stat (0 when it cannot be
// read).
func CPUSeconds() float64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

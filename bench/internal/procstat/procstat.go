// Package procstat reads resident sets and CPU time from /proc: the calling process's, for the
// benchmark servers that report their own cost (bench/push/server, bench/peers/centrifuge), and
// another process's memory by kind (its pid), for the tools that measure the shipped binary
// (bench/startup, bench/mcpquery, bench/memory).
package procstat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// SmapsRollup reads the fields of /proc/PID/smaps_rollup given in kB (Rss, Pss, Pss_Anon,
// Pss_File, Anonymous, ...), in bytes.
func SmapsRollup(pid int) (map[string]int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) == 3 && fs[2] == "kB" {
			v, _ := strconv.ParseInt(fs[1], 10, 64)
			m[strings.TrimSuffix(fs[0], ":")] = v * 1024
		}
	}
	if m["Rss"] == 0 {
		return nil, errors.New("smaps_rollup has no Rss")
	}
	return m, sc.Err()
}

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

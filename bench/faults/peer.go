package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// pidOfPeer finds which of pids owns the local end of the TCP connection whose remote side (as
// the sink sees it) is remote: the socket's inode from /proc/net/tcp, then the process holding
// it among pids' file descriptors. 0 when not found. It lets the fault schedule pause the node
// that has cron runs in flight right now.
func pidOfPeer(remote string, pids []int) int {
	host, port, err := net.SplitHostPort(remote)
	if err != nil || net.ParseIP(host).To4() == nil {
		return 0
	}
	p, _ := strconv.Atoi(port)
	ip := net.ParseIP(host).To4()
	// /proc/net/tcp prints the address as a little-endian hex word and the port big-endian.
	want := fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], p)
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0
	}
	inode := ""
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == want {
			inode = f[9]
			break
		}
	}
	if inode == "" {
		return 0
	}
	target := "socket:[" + inode + "]"
	for _, pid := range pids {
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && l == target {
				return pid
			}
		}
	}
	return 0
}

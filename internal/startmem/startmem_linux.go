package startmem

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// dropExecutablePages drops the mappings of the running executable's file that are not
// writable and hold no private copy of a page (smaps "Anonymous: 0 kB"; a debugger's breakpoint
// would make one), with madvise(MADV_DONTNEED). On such a mapping the call only removes the
// page-table entries: a later access maps the same page of the file again. It returns the
// resident size of the mappings it dropped.
func dropExecutablePages() (int64, error) {
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("startmem: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, nil
	}
	path, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("startmem: %w", err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("startmem: %w", err)
	}
	var dropped int64
	for _, m := range executableMappings(smaps, executable{dev: uint64(st.Dev), ino: st.Ino, path: path}) {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); errno != 0 {
			return dropped, fmt.Errorf("startmem: madvise %#x-%#x: %w", m.start, m.end, errno)
		}
		dropped += m.rss
	}
	return dropped, nil
}

// executable names the running program's file: its device and inode as stat reports them, and
// its path as /proc/self/exe reads. A mapping is the executable's when either matches: on
// overlayfs (containers) smaps shows the underlying file's device and inode but, on recent
// kernels, the path the program was started from.
type executable struct {
	dev, ino uint64
	path     string
}

// mapping is one read-only mapping of the executable that holds no private page.
type mapping struct {
	start, end uintptr
	rss        int64 // bytes resident
}

// executableMappings parses /proc/self/smaps and returns the mappings of exe's file that are not
// writable and whose Anonymous field is 0.
func executableMappings(smaps []byte, exe executable) []mapping {
	var out []mapping
	var cur *mapping // the current mapping while it is a candidate
	var rss int64
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") { // a mapping's header: range perms offset dev inode [path]
			cur = nil
			if m, ok := candidate(line, exe); ok {
				cur = &m
			}
			continue
		}
		if cur == nil || len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			cur = nil
			continue
		}
		switch f[0] {
		case "Rss:":
			rss = kb << 10
		case "Anonymous:":
			if kb == 0 {
				cur.rss = rss
				out = append(out, *cur)
			}
			cur = nil
		}
	}
	return out
}

// candidate reports whether the smaps header line maps exe's file without write permission.
func candidate(line string, exe executable) (mapping, bool) {
	var f [5]string
	rest := line
	for i := range f {
		f[i], rest, _ = strings.Cut(strings.TrimLeft(rest, " "), " ")
	}
	path := strings.TrimLeft(rest, " ")
	if len(f[1]) != 4 || f[1][1] == 'w' {
		return mapping{}, false
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return mapping{}, false
	}
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return mapping{}, false
	}
	m := mapping{start: uintptr(start), end: uintptr(end)}
	if path != "" && path == exe.path {
		return m, true
	}
	inode, err1 := strconv.ParseUint(f[4], 10, 64)
	major, minor, ok := strings.Cut(f[3], ":")
	if !ok || err1 != nil || inode != exe.ino {
		return mapping{}, false
	}
	mj, err1 := strconv.ParseUint(major, 16, 32)
	mn, err2 := strconv.ParseUint(minor, 16, 32)
	if err1 != nil || err2 != nil || mj != devMajor(exe.dev) || mn != devMinor(exe.dev) {
		return mapping{}, false
	}
	return m, true
}

// devMajor and devMinor split a Linux dev_t as glibc's gnu_dev_major and gnu_dev_minor do.
func devMajor(dev uint64) uint64 { return (dev>>8)&0xfff | (dev>>32)&^0xfff }
func devMinor(dev uint64) uint64 { return dev&0xff | (dev>>12)&^0xff }

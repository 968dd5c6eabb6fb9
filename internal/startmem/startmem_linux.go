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
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("startmem: %w", err)
	}
	var dropped int64
	for _, m := range executableMappings(smaps, uint64(st.Dev), st.Ino) {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); errno != 0 {
			return dropped, fmt.Errorf("startmem: madvise %#x-%#x: %w", m.start, m.end, errno)
		}
		dropped += m.rss
	}
	return dropped, nil
}

// mapping is one read-only mapping of the executable that holds no private page.
type mapping struct {
	start, end uintptr
	rss        int64 // bytes resident
}

// executableMappings parses /proc/self/smaps and returns the mappings of the file with device
// dev and inode ino that are not writable and whose Anonymous field is 0.
func executableMappings(smaps []byte, dev, ino uint64) []mapping {
	var out []mapping
	var cur *mapping // the current mapping while it is a candidate
	var rss int64
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") { // a mapping's header: range perms offset dev inode [path]
			cur = nil
			if m, ok := candidate(f, dev, ino); ok {
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

// candidate reports whether the smaps header f maps file dev:ino without write permission.
func candidate(f []string, dev, ino uint64) (mapping, bool) {
	if len(f) < 5 || len(f[1]) != 4 || f[1][1] == 'w' {
		return mapping{}, false
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return mapping{}, false
	}
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	inode, err3 := strconv.ParseUint(f[4], 10, 64)
	major, minor, ok := strings.Cut(f[3], ":")
	if !ok || err1 != nil || err2 != nil || err3 != nil || inode != ino || end <= start {
		return mapping{}, false
	}
	mj, err1 := strconv.ParseUint(major, 16, 32)
	mn, err2 := strconv.ParseUint(minor, 16, 32)
	if err1 != nil || err2 != nil || mj != devMajor(dev) || mn != devMinor(dev) {
		return mapping{}, false
	}
	return mapping{start: uintptr(start), end: uintptr(end)}, true
}

// devMajor and devMinor split a Linux dev_t as glibc's gnu_dev_major and gnu_dev_minor do.
func devMajor(dev uint64) uint64 { return (dev>>8)&0xfff | (dev>>32)&^0xfff }
func devMinor(dev uint64) uint64 { return dev&0xff | (dev>>12)&^0xff }

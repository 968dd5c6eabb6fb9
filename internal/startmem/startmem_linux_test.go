package startmem

import (
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// initialised is written by the package's initialiser: a page of writable data that release
// must leave alone.
var initialised = strings.Repeat("kept", 1024)

// executableRSS is the resident size of the test binary's read-only mappings.
func executableRSS(t *testing.T) int64 {
	t.Helper()
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	path, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, m := range executableMappings(smaps, executable{dev: uint64(st.Dev), ino: st.Ino, path: path}) {
		n += m.rss
	}
	return n
}

// TestReleaseDropsExecutablePages is the start.pages bypass's guard test: on, the read-only
// mappings of the executable leave the resident set and the program still runs, its code and
// data intact; off, the mappings are not touched.
func TestReleaseDropsExecutablePages(t *testing.T) {
	before := executableRSS(t)
	if before == 0 {
		t.Fatal("no resident read-only mapping of the test binary found in /proc/self/smaps")
	}
	res, err := release(false)
	if err != nil || res.Mapped != 0 {
		t.Fatalf("release(false) = %+v, %v; want nothing dropped", res, err)
	}

	res, err = release(true)
	if err != nil {
		t.Fatal(err)
	}
	after := executableRSS(t)
	t.Logf("resident read-only executable pages: %d KiB before, %d KiB dropped, %d KiB after", before>>10, res.Mapped>>10, after>>10)
	if res.Mapped < before/2 {
		t.Errorf("dropped %d bytes of %d resident", res.Mapped, before)
	}
	if after >= before {
		t.Errorf("resident read-only pages %d after the release, %d before", after, before)
	}

	// code and read-only data come back on use; writable data was never dropped
	if initialised != strings.Repeat("kept", 1024) {
		t.Fatal("writable data changed")
	}
	s := []string{"c", "a", "b"}
	slices.Sort(s)
	if strings.Join(s, "") != "abc" {
		t.Fatalf("sorted %v", s)
	}
}

func TestExecutableMappingsParse(t *testing.T) {
	t.Parallel()
	const dev = 0xfd<<8 | 0x01 // fd:01
	smaps := `00400000-01400000 r-xp 00000000 fd:01 42                                 /opt/svc
Size:              16384 kB
Rss:                8192 kB
Anonymous:             0 kB
01400000-02400000 r--p 01000000 fd:01 42                                 /opt/svc
Rss:                4096 kB
Anonymous:             4 kB
02400000-02500000 rw-p 02000000 fd:01 42                                 /opt/svc
Rss:                 512 kB
Anonymous:           512 kB
7f0000000000-7f0000100000 r-xp 00000000 fd:01 43                         /usr/lib/libc.so.6
Rss:                 900 kB
Anonymous:             0 kB
7f0000200000-7f0000300000 r-xp 00000000 fd:02 42                         /other/fs/inode42
Rss:                 100 kB
Anonymous:             0 kB
7f0000400000-7f0000500000 r--p 00000000 00:2a 77                         /opt/my svc (deleted)
Rss:                  64 kB
Anonymous:             0 kB
`
	got := executableMappings([]byte(smaps), executable{dev: dev, ino: 42, path: "/opt/svc"})
	want := []mapping{{start: 0x400000, end: 0x1400000, rss: 8192 << 10}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v, want %+v (the mapping with a private page, the writable one, other files and other devices are left)", got, want)
	}
	// on overlayfs the device and inode are the underlying file's: the path still names it
	got = executableMappings([]byte(smaps), executable{dev: 1, ino: 1, path: "/opt/my svc (deleted)"})
	want = []mapping{{start: 0x7f0000400000, end: 0x7f0000500000, rss: 64 << 10}}
	if !slices.Equal(got, want) {
		t.Fatalf("by path: got %+v, want %+v", got, want)
	}
}

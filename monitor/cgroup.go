package monitor

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// cgroups reads the CPU and memory limits of the control group this process runs in, cgroup
// v2 or v1, so a container reports against its own budget instead of the host's (the original
// framework's monitor does the same). fsys is rooted at "/"; tests pass a fstest.MapFS.
type cgroups struct {
	fsys fs.FS
}

// errNoCgroup means the figure is not limited by a control group (or none could be found).
var errNoCgroup = errors.New("monitor: no cgroup limit")

// dirs returns the directories, relative to fsys, that may hold the files of the cgroup v1
// controller (or of cgroup v2 when controller is ""), most specific first. Inside a cgroup
// namespace the process's own group is the root of the mount, hence the second candidate.
func (c cgroups) dirs(controller string) []string {
	data, err := fs.ReadFile(c.fsys, "proc/self/cgroup")
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctrls, p := parts[1], strings.TrimPrefix(parts[2], "/")
		switch {
		case controller == "" && parts[0] == "0" && ctrls == "":
			out = append(out, path.Join("sys/fs/cgroup", p), "sys/fs/cgroup")
		case controller != "" && hasController(ctrls, controller):
			base := path.Join("sys/fs/cgroup", ctrls)
			out = append(out, path.Join(base, p), base)
		}
	}
	return out
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// read returns the trimmed content of the first candidate directory's file name.
func (c cgroups) read(dirs []string, name string) (string, bool) {
	for _, d := range dirs {
		if b, err := fs.ReadFile(c.fsys, path.Join(d, name)); err == nil {
			return strings.TrimSpace(string(b)), true
		}
	}
	return "", false
}

// cpuLimit returns the CPU quota in cores, or errNoCgroup when there is none.
func (c cgroups) cpuLimit() (float64, error) {
	if s, ok := c.read(c.dirs(""), "cpu.max"); ok { // v2: "<quota> <period>" or "max <period>"
		f := strings.Fields(s)
		if len(f) == 2 && f[0] != "max" {
			return ratio(f[0], f[1])
		}
		return 0, errNoCgroup
	}
	dirs := c.dirs("cpu")
	quota, ok1 := c.read(dirs, "cpu.cfs_quota_us")
	period, ok2 := c.read(dirs, "cpu.cfs_period_us")
	if !ok1 || !ok2 || strings.HasPrefix(quota, "-") {
		return 0, errNoCgroup
	}
	return ratio(quota, period)
}

func ratio(num, den string) (float64, error) {
	n, err1 := strconv.ParseFloat(num, 64)
	d, err2 := strconv.ParseFloat(den, 64)
	if err := errors.Join(err1, err2); err != nil || n <= 0 || d <= 0 {
		return 0, errNoCgroup
	}
	return n / d, nil
}

// cpuUsage returns the CPU time the cgroup has used, in seconds.
func (c cgroups) cpuUsage() (float64, error) {
	if s, ok := c.read(c.dirs(""), "cpu.stat"); ok {
		for _, line := range strings.Split(s, "\n") {
			if v, found := strings.CutPrefix(line, "usage_usec "); found {
				us, err := strconv.ParseFloat(v, 64)
				return us / 1e6, err
			}
		}
	}
	if s, ok := c.read(c.dirs("cpuacct"), "cpuacct.usage"); ok {
		ns, err := strconv.ParseFloat(s, 64)
		return ns / 1e9, err
	}
	return 0, errNoCgroup
}

// memory returns the memory limit of the cgroup and its usage, in bytes, or errNoCgroup when
// memory is not limited.
func (c cgroups) memory() (limit, usage uint64, err error) {
	files := [][3]string{{"", "memory.max", "memory.current"}, {"memory", "memory.limit_in_bytes", "memory.usage_in_bytes"}}
	for _, f := range files {
		dirs := c.dirs(f[0])
		l, ok1 := c.read(dirs, f[1])
		u, ok2 := c.read(dirs, f[2])
		if !ok1 || !ok2 {
			continue
		}
		if l == "max" {
			return 0, 0, errNoCgroup
		}
		limit, err1 := strconv.ParseUint(l, 10, 64)
		usage, err2 := strconv.ParseUint(u, 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return 0, 0, err
		}
		return limit, usage, nil
	}
	return 0, 0, errNoCgroup
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// explanation holds the figures that tell one start-up reading from another (see the package
// comment): what a client without a token waits for, the login's own share, a cold page cache
// and a coarse poll.
type explanation struct {
	login, loginRunning []time.Duration
	cold, bareCold      []time.Duration
	coarse, bareCoarse  []time.Duration
}

// coarsePoll is the poll interval of the coarse figures: a shell loop's sleep 0.01.
const coarsePoll = 10 * time.Millisecond

// explain measures the explanation's figures on the existing database; bs is the bare handler
// (bs.bin empty: no bare figures) and bareUp its readiness.
func (s *svc) explain(base, token string, rounds int, bs *svc, bareUp func() bool) (explanation, error) {
	var ex explanation
	var err error
	loggedIn := func() bool {
		tok, _ := login(base)
		return tok != "" && userInfo(base, tok)
	}
	if ex.login, err = s.times(rounds, loggedIn); err != nil {
		return ex, fmt.Errorf("login after start: %w", err)
	}
	if ex.loginRunning, err = s.onRunning(rounds, base, token, loggedIn); err != nil {
		return ex, fmt.Errorf("login on a running server: %w", err)
	}
	if ex.cold, ex.coarse, err = s.coldAndCoarse(rounds, func() bool { return userInfo(base, token) }); err != nil {
		return ex, err
	}
	if bs.bin == "" {
		return ex, nil
	}
	if ex.bareCold, ex.bareCoarse, err = bs.coldAndCoarse(rounds, bareUp); err != nil {
		return ex, fmt.Errorf("bare: %w", err)
	}
	return ex, nil
}

// coldAndCoarse times rounds starts of s with a cold page cache, then rounds polled coarsely.
func (s *svc) coldAndCoarse(rounds int, ok func() bool) (cold, coarse []time.Duration, err error) {
	c, p := *s, *s
	c.cold, p.poll = true, coarsePoll
	if cold, err = c.times(rounds, ok); err != nil {
		return nil, nil, fmt.Errorf("cold: %w", err)
	}
	if coarse, err = p.times(rounds, ok); err != nil {
		return nil, nil, fmt.Errorf("coarse poll: %w", err)
	}
	return cold, coarse, nil
}

// onRunning starts the server once, waits until token works, and times ok rounds times on it.
func (s *svc) onRunning(rounds int, base, token string, ok func() bool) ([]time.Duration, error) {
	cmd, err := s.start()
	if err != nil {
		return nil, err
	}
	defer stop(cmd)
	deadline := time.Now().Add(30 * time.Second)
	for !userInfo(base, token) {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no answer within 30 s: %s", s.logTail())
		}
		time.Sleep(time.Millisecond)
	}
	var ds []time.Duration
	for range rounds {
		t0 := time.Now()
		if !ok() {
			return nil, fmt.Errorf("failed: %s", s.logTail())
		}
		ds = append(ds, time.Since(t0))
	}
	return ds, nil
}

func (ex explanation) print(bare bool) {
	fmt.Printf("existing database, no token → login + get_user_info 0: median %s  runs %v\n", ms(median(ex.login)), msList(ex.login))
	fmt.Printf("  of which login + get_user_info on a running server: median %s  runs %v\n", ms(median(ex.loginRunning)), msList(ex.loginRunning))
	fmt.Printf("existing database, cold page cache → get_user_info 0: median %s  runs %v\n", ms(median(ex.cold)), msList(ex.cold))
	fmt.Printf("existing database, polled every %s → get_user_info 0: median %s  runs %v\n", coarsePoll, ms(median(ex.coarse)), msList(ex.coarse))
	if bare {
		fmt.Printf("bare, cold page cache → first answer: median %s  runs %v\n", ms(median(ex.bareCold)), msList(ex.bareCold))
		fmt.Printf("bare, polled every %s → first answer: median %s  runs %v\n", coarsePoll, ms(median(ex.bareCoarse)), msList(ex.bareCoarse))
	}
}

// evict drops the clean page-cache pages of every regular file under paths (posix_fadvise
// DONTNEED; no privilege needed, dirty pages stay), so the next start reads them from disk as a
// first start after a reboot does.
func evict(paths ...string) error {
	for _, root := range paths {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("evict %s: %w", root, err)
		}
	}
	return nil
}

// procStat is what /proc/PID/stat says of a process's cost so far: minor page faults and CPU.
type procStat struct {
	minflt int64
	cpu    time.Duration // user + system
}

// readProcStat reads pid's minor faults and CPU time from /proc/PID/stat (fields 10, 14, 15;
// clock ticks of 10 ms).
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	num := func(i int) int64 { n, _ := strconv.ParseInt(f[i-3], 10, 64); return n }
	return procStat{minflt: num(10), cpu: time.Duration(num(14)+num(15)) * 10 * time.Millisecond}, nil
}

// costs prints the median minor faults and CPU of a figure's starts at their first answer and
// answers them (0, 0 when nothing was read).
func costs(what string, at []procStat) (faults int64, cpu time.Duration) {
	if len(at) == 0 {
		return 0, 0
	}
	flt := make([]time.Duration, len(at))
	cpus := make([]time.Duration, len(at))
	for i, st := range at {
		flt[i], cpus[i] = time.Duration(st.minflt), st.cpu
	}
	faults, cpu = int64(median(flt)), median(cpus)
	fmt.Printf("%s at its first answer: median %d minor page faults, %s CPU (user + system)\n", what, faults, ms(cpu))
	return faults, cpu
}

package monitor

import (
	"errors"
	"testing"
	"testing/fstest"
)

func TestCgroups(t *testing.T) {
	t.Parallel()
	v2 := func(files map[string]string) fstest.MapFS {
		fsys := fstest.MapFS{"proc/self/cgroup": {Data: []byte("0::/app.slice/svc.service\n")}}
		for name, data := range files {
			fsys["sys/fs/cgroup/app.slice/svc.service/"+name] = &fstest.MapFile{Data: []byte(data)}
		}
		return fsys
	}
	v1 := fstest.MapFS{
		"proc/self/cgroup": {Data: []byte("12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n")},
		// A cgroup namespace: the group's own files sit at the root of each mount.
		"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":            {Data: []byte("150000\n")},
		"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us":           {Data: []byte("100000\n")},
		"sys/fs/cgroup/cpu,cpuacct/cpuacct.usage":               {Data: []byte("2500000000\n")},
		"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": {Data: []byte("536870912\n")},
		"sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes": {Data: []byte("134217728\n")},
	}
	tests := []struct {
		name                 string
		fsys                 fstest.MapFS
		wantLimit, wantUsed  float64
		wantCPUErr           error
		wantMemLimit, memUse uint64
		wantMemErr           error
	}{
		{
			name: "v2 limited",
			fsys: v2(map[string]string{"cpu.max": "200000 100000", "cpu.stat": "usage_usec 3000000\nuser_usec 1\n",
				"memory.max": "1073741824", "memory.current": "1048576"}),
			wantLimit: 2, wantUsed: 3, wantMemLimit: 1 << 30, memUse: 1 << 20,
		},
		{
			name:       "v2 unlimited",
			fsys:       v2(map[string]string{"cpu.max": "max 100000", "memory.max": "max", "memory.current": "5"}),
			wantCPUErr: errNoCgroup, wantMemErr: errNoCgroup,
		},
		{
			name: "v1 with namespace root and nested memory group", fsys: v1,
			wantLimit: 1.5, wantUsed: 2.5, wantMemLimit: 512 << 20, memUse: 128 << 20,
		},
		{
			name:       "no cgroup at all",
			fsys:       fstest.MapFS{},
			wantCPUErr: errNoCgroup, wantMemErr: errNoCgroup,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cg := cgroups{fsys: tt.fsys}
			limit, err := cg.cpuLimit()
			if !errors.Is(err, tt.wantCPUErr) || limit != tt.wantLimit {
				t.Errorf("cpuLimit = %v, %v, want %v, %v", limit, err, tt.wantLimit, tt.wantCPUErr)
			}
			if tt.wantCPUErr == nil {
				if used, err := cg.cpuUsage(); err != nil || used != tt.wantUsed {
					t.Errorf("cpuUsage = %v, %v, want %v", used, err, tt.wantUsed)
				}
			}
			ml, mu, err := cg.memory()
			if !errors.Is(err, tt.wantMemErr) || ml != tt.wantMemLimit || mu != tt.memUse {
				t.Errorf("memory = %d, %d, %v, want %d, %d, %v", ml, mu, err, tt.wantMemLimit, tt.memUse, tt.wantMemErr)
			}
		})
	}
}

func TestApplyMemoryLimit(t *testing.T) {
	t.Parallel()
	host := VirtualMemory{Total: 64 << 30, Used: 10 << 30, UsedPercent: 15.625, Available: 54 << 30, Free: 50 << 30}

	v := host
	applyMemoryLimit(&v, 512<<20, 128<<20)
	if v.Total != 512<<20 || v.Used != 128<<20 || v.UsedPercent != 25 || v.Available != 384<<20 || v.Free != 384<<20 {
		t.Errorf("limited: %+v", v)
	}
	v = host
	applyMemoryLimit(&v, 9223372036854771712, 1<<30) // cgroup v1 "unlimited"
	if v != host {
		t.Errorf("unlimited group changed the figures: %+v", v)
	}
}

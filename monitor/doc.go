// Package monitor is the monitor module of svc: host, process and build figures over RPC,
// with a background sampler for CPU and process usage (spec §2.5, §4.1, §8.3; wire-core §8.2).
//
// # Resources and actions
//
// Resource sys/monitor, all actions Bearer-authenticated with permission token
// sys.monitor.query (Permission; without it 403/1100), no params (params are ignored), rate
// limit 60 per engine period, business errors at HTTP 200:
//
//   - get_overview: {host, cpu, memory, disk, network, process, load, build}; never fails as a
//     whole: a part whose probe fails (or, for cpu and process, has no sample yet) is null.
//     disk covers the filesystem of the root path only (partitions is always 1).
//   - get_cpu, get_process: from the sample cache; 2100 (monitor_not_ready) before the first
//     sample, 2101 (monitor_collection_failed) when the latest sample failed.
//   - get_memory, get_disk, get_network, get_host, get_load: read live; a failed probe answers
//     2101. In get_memory swap is null when only the swap probe failed; in get_disk a
//     partition whose usage cannot be read is left out and ioCounters is null when the
//     counters cannot be read.
//   - get_build_info: {vefVersion, frameworkVersion, appVersion, buildTime, gitCommit,
//     gitModified} from app.BuildInfo (link-time values, then the module version and the VCS
//     revision, commit time and modified flag Go embeds in the binary, then "unknown"); never
//     fails. get_overview.build is the same object.
//   - get_event_streams: {enabled, streams}; {enabled:false, streams:[]} without a
//     StreamInspector; an inspector error answers 2101.
//   - get_integration_stats: {enabled, stats}; {enabled:false, stats:[]} without a
//     StatsInspector.
//   - get_readiness (svc addition, issue #35): {ready, checks: [{name, kind, type, ready,
//     latencyMs}]}: every Options.Dependencies entry (the composition root lists the data
//     sources, primary first, and the key-value store when enabled, as GET /readyz checks them)
//     pinged at once within 2 s each; never fails, carries no error text (the cause is logged).
//
// Routes: none. Tables: none.
//
// Config keys: svc.monitor.sample_interval (default 10s) and svc.monitor.sample_duration
// (default 2s).
//
// Workers: sampler (logged as monitor.sampler), a loop worker. It samples at once when it
// starts, then every sample_interval (start to start); each sample measures CPU and process
// counters over one sample_duration window. get_cpu, get_process and the overview's cpu and
// process parts only read the latest sample: nothing is sampled on the request path.
//
// # Compatibility choices
//
//   - Permission (differs from the original and spec §4.1, see spec/README.md): every action
//     needs the permission token sys.monitor.query, because the host's binary path, command
//     line, addresses and mounts help an attacker; the original asks only for a Bearer token. A
//     role granting "*" (admin = ["*"]) or "sys.monitor.*" keeps access.
//   - get_build_info and get_overview.build send the framework version as vefVersion, the name
//     the original's monitor page reads, and again as frameworkVersion (ours), plus gitModified
//     (ours); spec/README.md lists the difference. buildTime falls back to the commit time
//     when no build time was linked in.
//   - The sampler measures its window with the real monotonic clock, not the service clock,
//     which tests may freeze.
//   - Container awareness, as in the original: inside a cgroup (v2, or v1) whose CPU quota is
//     below the logical core count, effectiveCores is the quota in cores, usagePercent is null
//     and totalPercent is the share of the quota used over the window (at most 100); otherwise
//     effectiveCores is the logical core count and totalPercent the usage of all cores. When a
//     cgroup limits memory below the host's, the headline memory figures (total, used,
//     usedPercent, available, free) describe the cgroup.
//   - Process cpuPercent is measured against one CPU (it can exceed 100); status is the
//     process state as reported by the OS (several states joined by ","); createTime is Unix
//     milliseconds. Process fields the OS will not tell (cwd, user name) are empty rather than
//     failing the sample.
//   - A failed sample is not papered over with an older one: get_cpu and get_process answer
//     2101 until the next sample succeeds.
//   - The event bus (when kvstore_stream is on) and the integration module implement
//     StreamInspector and StatsInspector;
//     since feature modules do not import each other, the composition root adapts their
//     types (StreamInspectorFunc, StatsInspectorFunc).
package monitor

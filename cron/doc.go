// Package cron is the durable cron store of svc (spec §4.1, §7, §8.3 `svc.cron.store`; wire
// facts in spec/wire-runtime.md §1). This first part holds the tables and migrations
// (crn_schedule, crn_fire_request, crn_run; instants as epoch milliseconds), the triggers (cron
// expressions in IANA zones, intervals anchored at startsAt or creation, once; windows with an
// inclusive start) with the misfire decision as pure functions, the job handler registry, the
// business errors 2700–2706 and their messages. The engine and resources come next (#16).
package cron

package cron

// Names of the resources this module mounts on /api (spec §4.1).
const (
	ScheduleResource = "sys/cron/schedule"
	RunResource      = "sys/cron/run"
)

// Permission tokens of the sys/cron operations (spec §4.1).
const (
	PermScheduleQuery  = "cron.schedule.query"
	PermScheduleManage = "cron.schedule.manage"
	PermRunQuery       = "cron.run.query"
)

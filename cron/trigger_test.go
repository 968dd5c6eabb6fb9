package cron

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func times(ss ...string) []time.Time {
	out := make([]time.Time, len(ss))
	for i, s := range ss {
		out[i] = at(s)
	}
	return out
}

func TestTimingNext(t *testing.T) {
	t.Parallel()
	const ny = "America/New_York"
	tests := []struct {
		name    string
		trigger Trigger
		window  Window
		anchor  string
		after   string
		want    []time.Time
	}{
		{name: "cron 5 fields UTC by default", trigger: Trigger{Kind: KindCron, Expr: "0 3 * * *"},
			after: "2026-01-01T05:00:00Z", want: times("2026-01-02T03:00:00Z", "2026-01-03T03:00:00Z", "2026-01-04T03:00:00Z")},
		{name: "cron 6 fields with seconds", trigger: Trigger{Kind: KindCron, Expr: "*/20 * * * * *"},
			after: "2026-01-01T00:00:00.5Z", want: times("2026-01-01T00:00:20Z", "2026-01-01T00:00:40Z", "2026-01-01T00:01:00Z")},
		{name: "descriptor in zone", trigger: Trigger{Kind: KindCron, Expr: "@daily", Timezone: "Asia/Shanghai"},
			after: "2026-01-01T00:00:00Z", want: times("2026-01-01T16:00:00Z", "2026-01-02T16:00:00Z", "2026-01-03T16:00:00Z")},
		{name: "every descriptor", trigger: Trigger{Kind: KindCron, Expr: "@every 90m"},
			after: "2026-01-01T00:00:00Z", want: times("2026-01-01T01:30:00Z", "2026-01-01T03:00:00Z", "2026-01-01T04:30:00Z")},
		{name: "DST spring forward: missing 02:30 fires at 03:30 once", trigger: Trigger{Kind: KindCron, Expr: "30 2 * * *", Timezone: ny},
			after: "2026-03-07T17:00:00Z", want: times("2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z")},
		{name: "DST fall back: repeated 01:30 fires once", trigger: Trigger{Kind: KindCron, Expr: "30 1 * * *", Timezone: ny},
			after: "2026-10-31T17:00:00Z", want: times("2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z", "2026-11-03T06:30:00Z")},
		{name: "DST fall back: hourly keeps elapsed hours", trigger: Trigger{Kind: KindCron, Expr: "0 * * * *", Timezone: ny},
			after: "2026-11-01T04:30:00Z", want: times("2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z")},
		{name: "DST spring forward: hourly", trigger: Trigger{Kind: KindCron, Expr: "0 * * * *", Timezone: ny},
			after: "2026-03-08T06:30:00Z", want: times("2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z", "2026-03-08T09:00:00Z")},
		{name: "cron window: start inclusive", trigger: Trigger{Kind: KindCron, Expr: "0 * * * *"},
			window: Window{StartsAt: at("2026-01-01T10:00:00Z"), EndsAt: at("2026-01-01T12:00:00Z")},
			after:  "2026-01-01T00:00:00Z", want: times("2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z")},
		{name: "interval anchored at creation", trigger: Trigger{Kind: KindInterval, Every: 10 * time.Second},
			anchor: "2026-01-01T00:00:03Z", after: "2026-01-01T00:00:25Z",
			want: times("2026-01-01T00:00:33Z", "2026-01-01T00:00:43Z", "2026-01-01T00:00:53Z")},
		{name: "interval before anchor fires at anchor", trigger: Trigger{Kind: KindInterval, Every: time.Minute},
			anchor: "2026-01-01T00:00:00Z", after: "2025-12-31T00:00:00Z",
			want: times("2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z")},
		{name: "interval on a tick moves strictly after", trigger: Trigger{Kind: KindInterval, Every: time.Minute},
			anchor: "2026-01-01T00:00:00Z", after: "2026-01-01T00:01:00Z",
			want: times("2026-01-01T00:02:00Z", "2026-01-01T00:03:00Z", "2026-01-01T00:04:00Z")},
		{name: "interval anchored at startsAt, window end", trigger: Trigger{Kind: KindInterval, Every: time.Hour},
			window: Window{StartsAt: at("2026-01-01T00:00:07Z"), EndsAt: at("2026-01-01T01:30:00Z")},
			anchor: "2025-06-01T00:00:00Z", after: "2025-12-01T00:00:00Z",
			want: times("2026-01-01T00:00:07Z", "2026-01-01T01:00:07Z")},
		{name: "once in the future", trigger: Trigger{Kind: KindOnce, At: at("2026-05-01T08:00:00.123456Z")},
			after: "2026-01-01T00:00:00Z", want: times("2026-05-01T08:00:00.123Z")},
		{name: "once spent", trigger: Trigger{Kind: KindOnce, At: at("2026-05-01T08:00:00Z")},
			after: "2026-05-01T08:00:00Z", want: []time.Time{}},
		{name: "once outside window", trigger: Trigger{Kind: KindOnce, At: at("2026-05-01T08:00:00Z")},
			window: Window{EndsAt: at("2026-04-01T00:00:00Z")}, after: "2026-01-01T00:00:00Z", want: []time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var anchor time.Time
			if tt.anchor != "" {
				anchor = at(tt.anchor)
			}
			tm, err := Compile(tt.trigger, tt.window, anchor)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			got := tm.NextN(at(tt.after), 3)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NextN (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	now := at("2026-01-01T00:00:00Z")
	tests := []struct {
		name    string
		trigger Trigger
		window  Window
		want    error
	}{
		{"unknown kind", Trigger{Kind: "hourly"}, Window{}, ErrTriggerKindUnknown},
		{"empty kind", Trigger{}, Window{}, ErrTriggerKindUnknown},
		{"cron without expression", Trigger{Kind: KindCron, Expr: "  "}, Window{}, ErrTriggerExprRequired},
		{"cron bad expression", Trigger{Kind: KindCron, Expr: "61 * * * *"}, Window{}, ErrTriggerExprInvalid},
		{"cron 7 fields", Trigger{Kind: KindCron, Expr: "0 0 0 1 1 * 2026"}, Window{}, ErrTriggerExprInvalid},
		{"cron zone prefix", Trigger{Kind: KindCron, Expr: "CRON_TZ=UTC 0 * * * *"}, Window{}, ErrTriggerExprInvalid},
		{"cron Local refused", Trigger{Kind: KindCron, Expr: "@daily", Timezone: "Local"}, Window{}, ErrTriggerTimezoneInvalid},
		{"cron unknown zone", Trigger{Kind: KindCron, Expr: "@daily", Timezone: "Mars/Olympus"}, Window{}, ErrTriggerTimezoneInvalid},
		{"cron with interval field", Trigger{Kind: KindCron, Expr: "@daily", Every: time.Second}, Window{}, ErrTriggerFieldsConflict},
		{"interval too short", Trigger{Kind: KindInterval, Every: 999 * time.Millisecond}, Window{}, ErrTriggerIntervalTooShort},
		{"interval zero", Trigger{Kind: KindInterval}, Window{}, ErrTriggerIntervalTooShort},
		{"interval sub-millisecond", Trigger{Kind: KindInterval, Every: time.Second + time.Microsecond}, Window{}, ErrTriggerIntervalNotWholeMs},
		{"interval with expression", Trigger{Kind: KindInterval, Every: time.Second, Expr: "@daily"}, Window{}, ErrTriggerFieldsConflict},
		{"interval with zone", Trigger{Kind: KindInterval, Every: time.Second, Timezone: "UTC"}, Window{}, ErrTriggerFieldsConflict},
		{"once without time", Trigger{Kind: KindOnce}, Window{}, ErrTriggerFireTimeRequired},
		{"once with every", Trigger{Kind: KindOnce, At: now, Every: time.Second}, Window{}, ErrTriggerFieldsConflict},
		{"window inverted", Trigger{Kind: KindOnce, At: now}, Window{StartsAt: now, EndsAt: now}, ErrWindowInverted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compile(tt.trigger, tt.window, now)
			if !errors.Is(err, tt.want) {
				t.Errorf("Compile error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestCompileNormalizes(t *testing.T) {
	t.Parallel()
	tm, err := Compile(Trigger{Kind: KindCron, Expr: "@hourly"}, Window{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tm.Trigger().Timezone; got != "UTC" {
		t.Errorf("Timezone = %q, want UTC", got)
	}
}

func TestIntervalFromMs(t *testing.T) {
	t.Parallel()
	if d, err := IntervalFromMs(1500); err != nil || d != 1500*time.Millisecond {
		t.Errorf("IntervalFromMs(1500) = %v, %v; want 1.5s, nil", d, err)
	}
	if _, err := IntervalFromMs(maxIntervalMs + 1); !errors.Is(err, ErrTriggerIntervalTooLong) {
		t.Errorf("IntervalFromMs(max+1) error = %v, want ErrTriggerIntervalTooLong", err)
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	minute := Trigger{Kind: KindInterval, Every: time.Minute}
	tests := []struct {
		name   string
		window Window
		policy MisfirePolicy
		due    string
		now    string
		want   Decision
	}{
		{name: "on time", policy: MisfireFireNow, due: "2026-01-01T00:05:00Z", now: "2026-01-01T00:05:00.2Z",
			want: Decision{Fire: true, FireAt: at("2026-01-01T00:05:00Z"), Next: at("2026-01-01T00:06:00Z")}},
		{name: "late but within threshold", policy: MisfireSkip, due: "2026-01-01T00:05:00Z", now: "2026-01-01T00:05:30Z",
			want: Decision{Fire: true, FireAt: at("2026-01-01T00:05:00Z"), Next: at("2026-01-01T00:06:00Z")}},
		{name: "fire_now catches up once, rest missed", policy: MisfireFireNow, due: "2026-01-01T00:05:00Z", now: "2026-01-01T00:09:30Z",
			want: Decision{Fire: true, FireAt: at("2026-01-01T00:05:00Z"), Missed: 4, MissedAt: at("2026-01-01T00:06:00Z"),
				Next: at("2026-01-01T00:10:00Z")}},
		{name: "fire_now with nothing else overdue", policy: MisfireFireNow, due: "2026-01-01T00:05:00Z", now: "2026-01-01T00:05:59Z",
			want: Decision{Fire: true, FireAt: at("2026-01-01T00:05:00Z"), Next: at("2026-01-01T00:06:00Z")}},
		{name: "skip journals the whole gap", policy: MisfireSkip, due: "2026-01-01T00:05:00Z", now: "2026-01-01T00:09:30Z",
			want: Decision{Missed: 5, MissedAt: at("2026-01-01T00:05:00Z"), Next: at("2026-01-01T00:10:00Z")}},
		{name: "gap counted up to window end, then spent", policy: MisfireSkip,
			window: Window{EndsAt: at("2026-01-01T00:07:00Z")}, due: "2026-01-01T00:05:00Z", now: "2026-01-01T00:09:30Z",
			want: Decision{Missed: 3, MissedAt: at("2026-01-01T00:05:00Z")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tm, err := Compile(minute, tt.window, at("2026-01-01T00:00:00Z"))
			if err != nil {
				t.Fatal(err)
			}
			got := Decide(tm, at(tt.due), at(tt.now), 30*time.Second, tt.policy)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideCapsMissedCount(t *testing.T) {
	t.Parallel()
	tm, err := Compile(Trigger{Kind: KindInterval, Every: time.Second}, Window{}, at("2026-01-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	got := Decide(tm, at("2026-01-01T00:00:00Z"), at("2026-01-02T00:00:00.5Z"), time.Minute, MisfireSkip)
	if got.Missed != maxMissedCount {
		t.Errorf("Missed = %d, want %d", got.Missed, maxMissedCount)
	}
	if want := at("2026-01-02T00:00:01Z"); !got.Next.Equal(want) {
		t.Errorf("Next = %v, want %v", got.Next, want)
	}
}

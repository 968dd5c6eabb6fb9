package cron

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	_ "time/tzdata" // wire-runtime §1.5: zones resolve on hosts without a zoneinfo database

	gocron "github.com/netresearch/go-cron"
)

// Kind is the kind of a trigger (wire-runtime §1.5).
type Kind string

// Trigger kinds.
const (
	KindCron     Kind = "cron"
	KindInterval Kind = "interval"
	KindOnce     Kind = "once"
)

// MinInterval is the shortest interval trigger (wire-runtime §1.5).
const MinInterval = time.Second

// maxIntervalMs is the largest millisecond count a time.Duration holds.
const maxIntervalMs = math.MaxInt64 / int64(time.Millisecond)

// cronParser reads 5- or 6-field expressions (the optional leading field is seconds) and the
// @ descriptors (@daily, @every 90m, …), as the original's robfig/cron v3 configuration did.
var cronParser = gocron.MustNewParser(gocron.Minute | gocron.Hour | gocron.Dom | gocron.Month | gocron.Dow | gocron.Descriptor).WithSecondOptional()

// Trigger is the timing rule of a schedule. Only the fields of its Kind may be set: Expr and
// Timezone for cron, Every for interval, At for once (others are ErrTriggerFieldsConflict).
type Trigger struct {
	Kind Kind
	// Expr is the cron expression.
	Expr string
	// Timezone is the IANA zone the expression is evaluated in; empty means UTC, "Local" is
	// refused because it would make the schedule depend on the node's configuration.
	Timezone string
	// Every is the interval's period: at least MinInterval, a whole number of milliseconds.
	Every time.Duration
	// At is the once trigger's fire time.
	At time.Time
}

// Window bounds a schedule's occurrences; a zero bound is open. StartsAt is itself a valid fire
// time and an occurrence exactly at EndsAt still fires (wire-runtime §1.5: only occurrences after
// EndsAt are dropped).
type Window struct {
	StartsAt time.Time
	EndsAt   time.Time
}

// Timing is a compiled trigger with its window: the pure next-fire computation of a schedule.
// All instants are handled at millisecond precision, the precision of the store.
type Timing struct {
	trigger Trigger
	window  Window
	next    func(after time.Time) time.Time
}

// Compile checks t and w and returns their Timing. anchor is the phase of an interval trigger
// when the window has no start (the schedule's creation time). Errors are the ErrTrigger*
// reasons (2703) and ErrWindowInverted (2706).
func Compile(t Trigger, w Window, anchor time.Time) (*Timing, error) {
	if err := t.conflicts(); err != nil {
		return nil, err
	}
	w = Window{StartsAt: ms(w.StartsAt), EndsAt: ms(w.EndsAt)}
	if !w.StartsAt.IsZero() && !w.EndsAt.IsZero() && !w.EndsAt.After(w.StartsAt) {
		return nil, ErrWindowInverted
	}
	tm := &Timing{trigger: t, window: w}
	switch t.Kind {
	case KindCron:
		next, tz, err := compileCron(t.Expr, t.Timezone)
		if err != nil {
			return nil, err
		}
		tm.trigger.Timezone, tm.next = tz, next
	case KindInterval:
		if err := checkInterval(t.Every); err != nil {
			return nil, err
		}
		if !w.StartsAt.IsZero() {
			anchor = w.StartsAt
		}
		tm.next = intervalNext(ms(anchor), t.Every)
	case KindOnce:
		if t.At.IsZero() {
			return nil, ErrTriggerFireTimeRequired
		}
		at := ms(t.At)
		tm.trigger.At = at
		tm.next = func(after time.Time) time.Time {
			if at.After(after) {
				return at
			}
			return time.Time{}
		}
	default:
		return nil, fmt.Errorf("%w: %q", ErrTriggerKindUnknown, t.Kind)
	}
	return tm, nil
}

// Trigger returns the normalized trigger: a cron trigger's empty zone is "UTC".
func (tm *Timing) Trigger() Trigger { return tm.trigger }

// Next returns the first occurrence strictly after after that lies in the window, or the zero
// time when there is none (a spent once trigger, the end of the window).
func (tm *Timing) Next(after time.Time) time.Time {
	after = ms(after)
	if s := tm.window.StartsAt; !s.IsZero() && after.Before(s) {
		after = s.Add(-time.Millisecond) // the start itself may fire
	}
	n := tm.next(after)
	if n.IsZero() || (!tm.window.EndsAt.IsZero() && n.After(tm.window.EndsAt)) {
		return time.Time{}
	}
	return n.UTC()
}

// NextN returns up to n successive occurrences after after (get and preview_fires).
func (tm *Timing) NextN(after time.Time, n int) []time.Time {
	out := make([]time.Time, 0, n)
	for t := tm.Next(after); !t.IsZero() && len(out) < n; t = tm.Next(t) {
		out = append(out, t)
	}
	return out
}

// conflicts reports fields set that belong to another kind (judged by non-zero value, the rule
// of the older wire shape the real client speaks).
func (t Trigger) conflicts() error {
	var bad bool
	switch t.Kind {
	case KindCron:
		bad = t.Every != 0 || !t.At.IsZero()
	case KindInterval:
		bad = t.Expr != "" || t.Timezone != "" || !t.At.IsZero()
	case KindOnce:
		bad = t.Expr != "" || t.Timezone != "" || t.Every != 0
	}
	if bad {
		return ErrTriggerFieldsConflict
	}
	return nil
}

// compileCron parses expr in zone tz and returns the next function and the stored zone name.
func compileCron(expr, tz string) (func(time.Time) time.Time, string, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, "", ErrTriggerExprRequired
	}
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		// the zone has its own field; a second one in the expression would be ambiguous
		return nil, "", fmt.Errorf("%w: zone prefix not allowed, use timezone", ErrTriggerExprInvalid)
	}
	loc, tz, err := location(tz)
	if err != nil {
		return nil, "", err
	}
	sched, err := cronParser.Parse(expr)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrTriggerExprInvalid, err)
	}
	spec, ok := sched.(*gocron.SpecSchedule)
	everyHour := ok && spec.Hour&allHours == allHours
	next := func(after time.Time) time.Time {
		// the expression has no zone of its own, so the parser evaluates in after's zone
		n := sched.Next(after.In(loc))
		for !everyHour && !n.IsZero() && repeatedWallClock(n, loc) {
			n = sched.Next(n)
		}
		return ms(n)
	}
	return next, tz, nil
}

// allHours is the Hour bit set of an expression that fires in every hour of the day.
const allHours = 1<<24 - 1

// repeatedWallClock reports whether the wall-clock time of t in loc already occurred earlier,
// in the hour a "fall back" change repeats. An expression pinned to certain hours fires at such a
// wall time once, in its first pass, as the classic cron daemons do: a daily "30 1 * * *" job
// runs once on the night the clocks go back, not twice. Expressions firing in every hour keep
// running by elapsed time through the repeated hour. (A "spring forward" gap needs no rule: the
// parser moves a wall time that does not exist to the same minute of the next existing hour.)
func repeatedWallClock(t time.Time, loc *time.Location) bool {
	t = t.In(loc)
	_, now := t.Zone()
	_, before := t.Add(-24 * time.Hour).Zone()
	if before <= now {
		return false
	}
	p := t.Add(-time.Duration(before-now) * time.Second)
	return p.Format(time.DateTime) == t.Format(time.DateTime)
}

// location resolves a trigger zone: "" → UTC, "Local" refused.
func location(tz string) (*time.Location, string, error) {
	if tz == "" {
		tz = "UTC"
	}
	if tz == "Local" {
		return nil, "", fmt.Errorf("%w: Local is not allowed", ErrTriggerTimezoneInvalid)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %q", ErrTriggerTimezoneInvalid, tz)
	}
	return loc, tz, nil
}

// checkInterval enforces the interval bounds.
func checkInterval(every time.Duration) error {
	switch {
	case every < MinInterval:
		return ErrTriggerIntervalTooShort
	case every%time.Millisecond != 0:
		return ErrTriggerIntervalNotWholeMs
	}
	return nil
}

// IntervalFromMs turns a wire everyMs into a Duration, refusing counts a Duration cannot hold.
func IntervalFromMs(everyMs int64) (time.Duration, error) {
	if everyMs > maxIntervalMs {
		return 0, ErrTriggerIntervalTooLong
	}
	return time.Duration(everyMs) * time.Millisecond, nil
}

// intervalNext is the fixed-rate rule: the anchor while before it, else the first
// anchor + k·every strictly after the instant.
func intervalNext(anchor time.Time, every time.Duration) func(time.Time) time.Time {
	return func(after time.Time) time.Time {
		if after.Before(anchor) {
			return anchor
		}
		k := after.Sub(anchor)/every + 1
		return anchor.Add(k * every)
	}
}

// ms truncates t to the store's millisecond precision in UTC; the zero time stays zero.
func ms(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Millisecond)
}

// fromUnixMs is the inverse of toUnixMs for nullable columns.
func fromUnixMs(v *int64) time.Time {
	if v == nil {
		return time.Time{}
	}
	return time.UnixMilli(*v).UTC()
}

// toUnixMs stores t as epoch milliseconds, nil for the zero time.
func toUnixMs(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	v := t.UnixMilli()
	return &v
}

// isTriggerReason reports whether err is one of the 2703 reasons.
func isTriggerReason(err error) bool {
	for _, r := range []error{ErrTriggerKindUnknown, ErrTriggerExprRequired, ErrTriggerExprInvalid,
		ErrTriggerTimezoneInvalid, ErrTriggerIntervalTooShort, ErrTriggerIntervalTooLong,
		ErrTriggerFireTimeRequired, ErrTriggerFieldsConflict, ErrTriggerIntervalNotWholeMs} {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}

package cron

import "time"

// MisfirePolicy says what a schedule does with occurrences it missed (wire-runtime §1.7).
type MisfirePolicy string

// Misfire policies.
const (
	// MisfireFireNow runs one catch-up at the original due time and journals the rest of the
	// gap as one missed row.
	MisfireFireNow MisfirePolicy = "fire_now"
	// MisfireSkip runs nothing and journals the whole gap as one missed row.
	MisfireSkip MisfirePolicy = "skip"
)

// maxMissedCount caps the occurrences counted into one missed row (wire-runtime §1.7).
const maxMissedCount = 10000

// Decision is what a claim does with a schedule whose cursor is due.
type Decision struct {
	// Fire is set when a run starts; FireAt is its logical time.
	Fire   bool
	FireAt time.Time
	// Missed > 0 journals one missed row with logical time MissedAt and missedCount Missed.
	Missed   int
	MissedAt time.Time
	// Next is the new cursor; zero when the trigger is spent.
	Next time.Time
}

// Decide applies the misfire rule to a due cursor (wire-runtime §1.7). Within threshold of now
// the occurrence fires on time and the cursor moves to the next occurrence after due. Later, the
// occurrences in (due, now] are counted (capped at 10 000, the window's end respected by Next)
// and the cursor jumps to the first occurrence strictly after now: fire_now runs a catch-up at
// due and journals the counted rest as missed; skip runs nothing and journals due plus the rest.
func Decide(tm *Timing, due, now time.Time, threshold time.Duration, policy MisfirePolicy) Decision {
	due, now = ms(due), ms(now)
	if now.Sub(due) <= threshold {
		return Decision{Fire: true, FireAt: due, Next: tm.Next(due)}
	}
	var first time.Time
	count := 0
	for t := tm.Next(due); !t.IsZero() && !t.After(now) && count < maxMissedCount; t = tm.Next(t) {
		if count == 0 {
			first = t
		}
		count++
	}
	d := Decision{Next: tm.Next(now)}
	if policy == MisfireSkip {
		d.Missed, d.MissedAt = min(1+count, maxMissedCount), due
		return d
	}
	d.Fire, d.FireAt = true, due
	if count > 0 {
		d.Missed, d.MissedAt = count, first
	}
	return d
}

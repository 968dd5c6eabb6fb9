package crud

import (
	"database/sql/driver"
	"fmt"
	"time"
)

// DateTimeLayout is the wire form of audit times: a naive wall-clock time in the server's zone
// with second precision ("2006-01-02 15:04:05"), the original's timex.DateTime that its client
// reads (wire-core §7).
const DateTimeLayout = time.DateTime

// Time is an instant stored in UTC (microsecond precision, the finest all three dialects keep)
// and rendered in JSON as DateTimeLayout in the server's local zone.
type Time struct{ time.Time }

// NewTime returns t as a stored Time (UTC, truncated to microseconds).
func NewTime(t time.Time) Time { return Time{t.UTC().Truncate(time.Microsecond)} }

// MarshalJSON renders the time as DateTimeLayout in the local zone; the zero time is null.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.Local().Format(DateTimeLayout) + `"`), nil
}

// UnmarshalJSON accepts DateTimeLayout in the local zone, RFC 3339 or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" || s == `""` {
		*t = Time{}
		return nil
	}
	if len(s) < 2 || s[0] != '"' {
		return fmt.Errorf("crud: time %s is not a string", s)
	}
	s = s[1 : len(s)-1]
	v, err := time.ParseInLocation(DateTimeLayout, s, time.Local)
	if err != nil {
		if v, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return fmt.Errorf("crud: time %q: want %q or RFC 3339", s, DateTimeLayout)
		}
	}
	*t = NewTime(v)
	return nil
}

// Value stores the time in UTC.
func (t Time) Value() (driver.Value, error) { return t.UTC().Truncate(time.Microsecond), nil }

// Scan reads a time column: every driver of db returns time.Time for the declared types
// (timestamp, DATETIME(6), TIMESTAMP); SQLite text in its default layouts is parsed too.
func (t *Time) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*t = Time{}
	case time.Time:
		*t = Time{v.UTC()}
	case string:
		return t.scanText(v)
	case []byte:
		return t.scanText(string(v))
	default:
		return fmt.Errorf("crud: cannot scan %T into a time", src)
	}
	return nil
}

func (t *Time) scanText(s string) error {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999", time.RFC3339Nano} {
		if v, err := time.Parse(layout, s); err == nil {
			*t = Time{v.UTC()}
			return nil
		}
	}
	return fmt.Errorf("crud: cannot parse time %q", s)
}

// Audited are the audit columns of every managed table (wire-integration §3, the original's
// FullAuditedModel): id (UUIDv7), created_at/by and updated_at/by. Models embed it.
type Audited struct {
	ID        string `bun:"id,pk" json:"id"`
	CreatedAt Time   `bun:"created_at" json:"createdAt"`
	CreatedBy string `bun:"created_by" json:"createdBy"`
	UpdatedAt Time   `bun:"updated_at" json:"updatedAt"`
	UpdatedBy string `bun:"updated_by" json:"updatedBy"`
}

// Audit returns the audit columns; it makes every model embedding Audited a Model.
func (a *Audited) Audit() *Audited { return a }

// Model is a bun model with the audit columns (it embeds Audited).
type Model interface {
	Audit() *Audited
}

package approval

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Decimal is a NUMERIC(5,2) value such as apv_flow_node.pass_ratio (a percentage). It is rendered
// in JSON as a decimal string ("66.67"), what the original's decimal type writes and its client
// reads, and accepts a string or a number.
type Decimal struct{ v float64 }

// NewDecimal returns f rounded to two decimals.
func NewDecimal(f float64) Decimal {
	d, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', 2, 64), 64)
	return Decimal{d}
}

// Float returns the value.
func (d Decimal) Float() float64 { return d.v }

// String renders the value without trailing zeros ("100", "66.67").
func (d Decimal) String() string { return strconv.FormatFloat(d.v, 'f', -1, 64) }

// MarshalJSON renders the value as a decimal string.
func (d Decimal) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON accepts a JSON number or a decimal string.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	if s == "" || s == "null" {
		*d = Decimal{}
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("approval: decimal %s: %w", b, err)
	}
	*d = NewDecimal(f)
	return nil
}

// Value stores the value as a decimal string (exact in every dialect's NUMERIC).
func (d Decimal) Value() (driver.Value, error) { return strconv.FormatFloat(d.v, 'f', 2, 64), nil }

// Scan reads a NUMERIC column: drivers return text, bytes or a float.
func (d *Decimal) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d = Decimal{}
	case float64:
		*d = NewDecimal(v)
	case int64:
		*d = Decimal{float64(v)}
	case string:
		return d.UnmarshalJSON([]byte(v))
	case []byte:
		return d.UnmarshalJSON(v)
	default:
		return fmt.Errorf("approval: cannot scan %T into a decimal", src)
	}
	return nil
}

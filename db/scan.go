package db

import (
	"database/sql"
	"fmt"
)

// Rows is a query's answer as plain values, read under a row and a byte cap: each value is nil,
// int64, float64, bool, string, []byte or time.Time (what the drivers give).
type Rows struct {
	// Columns are the result's column names, in order (duplicates kept).
	Columns []string
	// Values holds one slice per row, in column order; empty, not nil, when no row matched.
	Values [][]any
	// Truncated reports that more rows matched than were read; the rest were never fetched.
	Truncated bool
}

// byteCap counts the bytes of the values read by one call against its limit.
type byteCap struct {
	max, used int64
}

// charge adds n bytes, failing with ErrResultTooLarge once the total passes the limit.
func (b *byteCap) charge(n int64) error {
	b.used += n
	if b.used > b.max {
		return fmt.Errorf("%w of %d bytes", ErrResultTooLarge, b.max)
	}
	return nil
}

// valueSize is what a scanned value counts against a byte cap: text and binary values their
// length, anything else 8 bytes.
func valueSize(v any) int64 {
	switch x := v.(type) {
	case []byte:
		return int64(len(x))
	case string:
		return int64(len(x))
	case nil:
		return 0
	}
	return 8
}

// ScanRows reads at most maxRows rows of rows and closes it; a further row sets Truncated. Every
// value is charged to a cap of maxBytes as it is scanned, and passing the cap stops the read
// with ErrResultTooLarge. It is the scanning of ReadOnly on PostgreSQL and MySQL, for callers
// that run their own statements (the integration scripts' read_write data sources).
func ScanRows(rows *sql.Rows, maxRows int, maxBytes int64) (*Rows, error) {
	return scanRows(rows, maxRows, &byteCap{max: maxBytes})
}

func scanRows(rows *sql.Rows, maxRows int, cap *byteCap) (*Rows, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	res := &Rows{Columns: cols, Values: [][]any{}}
	ptrs := make([]any, len(cols))
	for rows.Next() {
		if len(res.Values) == maxRows {
			res.Truncated = true
			return res, nil
		}
		row := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for _, v := range row {
			if err := cap.charge(valueSize(v)); err != nil {
				return nil, err
			}
		}
		res.Values = append(res.Values, row)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

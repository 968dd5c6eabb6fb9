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

// RowSink receives a result as it is read (ReadOnly.QueryTo): Columns once, before any row, then
// Row for each row in order. The values slice is the reader's and is reused for the next row:
// a sink that keeps values copies the slice. An error from either method stops the statement
// and is the call's error, wrapped as it was returned.
type RowSink interface {
	Columns(names []string) error
	Row(values []any) error
}

// collector is the RowSink of Query and ScanRows: it keeps every row.
type collector struct{ res *Rows }

func (c *collector) Columns(names []string) error {
	c.res.Columns = names
	return nil
}

func (c *collector) Row(values []any) error {
	c.res.Values = append(c.res.Values, append([]any(nil), values...))
	return nil
}

// byteCap counts the bytes of the values read by one call against its limit. Text and binary
// values count their length; a value of fixed size (a number, a time, a bool) counts fixed.
type byteCap struct {
	max, used int64
	fixed     int64
}

// fixedValueBytes is what a fixed-size value counts for Query and ScanRows, which keep every
// value: about its size in memory.
const fixedValueBytes = 8

// charge adds n bytes, failing with ErrResultTooLarge once the total passes the limit.
func (b *byteCap) charge(n int64) error {
	b.used += n
	if b.used > b.max {
		return fmt.Errorf("%w of %d bytes", ErrResultTooLarge, b.max)
	}
	return nil
}

// valueSize is what a scanned value counts against the cap: text and binary values their
// length, NULL nothing, anything else b.fixed.
func (b *byteCap) valueSize(v any) int64 {
	switch x := v.(type) {
	case []byte:
		return int64(len(x))
	case string:
		return int64(len(x))
	case nil:
		return 0
	}
	return b.fixed
}

// ScanRows reads at most maxRows rows of rows and closes it; a further row sets Truncated. Every
// value is charged to a cap of maxBytes as it is scanned, and passing the cap stops the read
// with ErrResultTooLarge. It is the scanning of ReadOnly on PostgreSQL and MySQL, for callers
// that run their own statements (the integration scripts' read_write data sources).
func ScanRows(rows *sql.Rows, maxRows int, maxBytes int64) (*Rows, error) {
	res := &Rows{Values: [][]any{}}
	truncated, err := scanRows(rows, maxRows, &byteCap{max: maxBytes, fixed: fixedValueBytes}, &collector{res})
	if err != nil {
		return nil, err
	}
	res.Truncated = truncated
	return res, nil
}

// scanRows hands at most maxRows rows of rows to sink and closes rows; it reports whether a
// further row existed (never fetched past it). Each row's values are charged to cap before the
// sink sees them.
func scanRows(rows *sql.Rows, maxRows int, cap *byteCap, sink RowSink) (truncated bool, err error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return false, err
	}
	if err := sink.Columns(cols); err != nil {
		return false, err
	}
	row := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range row {
		ptrs[i] = &row[i]
	}
	for n := 0; rows.Next(); n++ {
		if n == maxRows {
			return true, nil
		}
		clear(row)
		if err := rows.Scan(ptrs...); err != nil {
			return false, err
		}
		for _, v := range row {
			if err := cap.charge(cap.valueSize(v)); err != nil {
				return false, err
			}
		}
		if err := sink.Row(row); err != nil {
			return false, err
		}
	}
	return false, rows.Err()
}

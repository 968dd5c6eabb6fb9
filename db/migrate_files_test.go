package db

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitStatements(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sql  string
		want []string
	}{
		{"one statement", "CREATE TABLE a (id INT);\n", []string{"CREATE TABLE a (id INT)"}},
		{"no final semicolon", "CREATE TABLE a (id INT)", []string{"CREATE TABLE a (id INT)"}},
		{"multi-line statements", "CREATE TABLE a (\n  id INT\n);\r\nINSERT INTO a VALUES (1);  \n", []string{"CREATE TABLE a (\n  id INT\n)", "INSERT INTO a VALUES (1)"}},
		{"semicolon inside a line", "INSERT INTO a VALUES ('x;y');\n", []string{"INSERT INTO a VALUES ('x;y')"}},
		{"comment lines dropped", "-- first;\n# second;\nSELECT 1;\n  -- trailing\n", []string{"SELECT 1"}},
		{"blank statements dropped", ";\n\n;\nSELECT 1;\n", []string{"SELECT 1"}},
		{"empty", "\n\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, splitStatements(tt.sql)); diff != "" {
				t.Errorf("splitStatements(%q) (-want +got):\n%s", tt.sql, diff)
			}
		})
	}
}

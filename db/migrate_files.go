package db

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/svc-framework/svc/config"
)

// ErrInvalidMigrations is wrapped by every error about the migration files themselves: a bad
// file name, a duplicate or missing version, a missing dialect directory, a repeated module.
var ErrInvalidMigrations = errors.New("invalid migrations")

// Migration is one migration file of one module for the dialect of the database at hand.
type Migration struct {
	// Module is the owning module (Migrations.Module).
	Module string
	// Version is the NNN prefix of the file name as a number (1 for 001_init.sql).
	Version int
	// Name is the file name between the NNN_ prefix and ".sql" ("init").
	Name string
	// File is the path inside the module's FS ("postgres/001_init.sql").
	File string

	sql string
}

// migrationFileName is NNN_name.sql: at least three digits, an underscore, then a name of
// letters, digits, "_" and "-".
var migrationFileName = regexp.MustCompile(`^([0-9]{3,})_([A-Za-z0-9][A-Za-z0-9_-]*)\.sql$`)

// kindDir is the directory of a module's FS that holds the files for a dialect.
func kindDir(kind config.DBKind) (string, error) {
	switch kind {
	case config.Postgres, config.MySQL, config.SQLite:
		return string(kind), nil
	default:
		return "", fmt.Errorf("%w: %q", ErrUnsupportedDBKind, kind)
	}
}

// loadAll reads and checks every set before anything touches the database, so a packaging
// mistake in any module stops the run before the first statement.
func loadAll(kind config.DBKind, sets []Migrations) ([][]Migration, error) {
	dir, err := kindDir(kind)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(sets))
	all := make([][]Migration, 0, len(sets))
	for _, set := range sets {
		if set.Module == "" || set.FS == nil {
			return nil, fmt.Errorf("%w: a migration set needs a module name and an FS (module %q)", ErrInvalidMigrations, set.Module)
		}
		if seen[set.Module] {
			return nil, fmt.Errorf("%w: module %q is listed twice", ErrInvalidMigrations, set.Module)
		}
		seen[set.Module] = true
		ms, err := loadSet(set, dir)
		if err != nil {
			return nil, fmt.Errorf("module %q: %w", set.Module, err)
		}
		all = append(all, ms)
	}
	return all, nil
}

// loadSet reads <dir>/NNN_name.sql of one module and checks that the versions are exactly
// 1, 2, 3, … with no gap and no duplicate.
func loadSet(set Migrations, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(set.FS, dir)
	if err != nil {
		return nil, fmt.Errorf("%w: directory %s/: %w", ErrInvalidMigrations, dir, err)
	}
	ms := make([]Migration, 0, len(entries))
	for _, e := range entries {
		file := path.Join(dir, e.Name())
		m := migrationFileName.FindStringSubmatch(e.Name())
		if e.IsDir() || m == nil {
			return nil, fmt.Errorf("%w: %s: want files named NNN_name.sql (e.g. 001_init.sql)", ErrInvalidMigrations, file)
		}
		version, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, fmt.Errorf("%w: %s: version: %w", ErrInvalidMigrations, file, err)
		}
		body, err := fs.ReadFile(set.FS, file)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
		ms = append(ms, Migration{Module: set.Module, Version: version, Name: m[2], File: file, sql: string(body)})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range ms {
		switch want := i + 1; {
		case m.Version < want:
			return nil, fmt.Errorf("%w: %s and %s have the same version %d", ErrInvalidMigrations, ms[i-1].File, m.File, m.Version)
		case m.Version > want:
			return nil, fmt.Errorf("%w: %s: version %d is missing (versions start at 1 with no gaps)", ErrInvalidMigrations, m.File, want)
		}
	}
	return ms, nil
}

// splitStatements cuts a MySQL migration into statements (MySQL runs one statement per query
// unless multiStatements is on, which Open leaves off). The rule: a statement ends at a line
// whose last non-blank character is ";"; lines that are only a "--" or "#" comment are dropped;
// text after the last ";" is a final statement. There is no DELIMITER support, so procedures,
// triggers with compound bodies, and ";" at the end of a line inside a string literal cannot be
// used in MySQL migrations.
func splitStatements(sql string) []string {
	var (
		out []string
		cur strings.Builder
	)
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for line := range strings.Lines(sql) {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasSuffix(trimmed, ";") {
			cur.WriteString(strings.TrimSuffix(strings.TrimRight(line, " \t\r\n"), ";"))
			flush()
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return out
}

// LatestVersions answers the newest migration version of every set for a dialect: what a
// binary knows of each module's schema (a backup restore refuses a newer one).
func LatestVersions(kind config.DBKind, sets ...Migrations) (map[string]int, error) {
	all, err := loadAll(kind, sets)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(all))
	for i, ms := range all {
		out[sets[i].Module] = len(ms)
	}
	return out, nil
}

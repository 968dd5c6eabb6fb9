package i18n

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
)

// Union returns one catalog file system over several: a module whose messages come from more
// than one package (approval and approval/design) hands the union to app.Module.Messages.
// Open answers the first file system that has the name; ReadDir merges the directories (a name
// present in several is listed once, from the first).
func Union(fss ...fs.FS) fs.FS { return union(fss) }

type union []fs.FS

var _ fs.ReadDirFS = union(nil)

// Open implements fs.FS.
func (u union) Open(name string) (fs.File, error) {
	var first error
	for _, f := range u {
		file, err := f.Open(name)
		if err == nil {
			return file, nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return nil, first
}

// ReadDir implements fs.ReadDirFS.
func (u union) ReadDir(name string) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	found := false
	for _, f := range u {
		entries, err := fs.ReadDir(f, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		found = true
		for _, e := range entries {
			if !slices.ContainsFunc(out, func(o fs.DirEntry) bool { return o.Name() == e.Name() }) {
				out = append(out, e)
			}
		}
	}
	if !found {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

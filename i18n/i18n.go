// Package i18n holds the message catalogs (en, zh-CN) of every message key and renders messages
// in the process-wide language chosen by SVC_I18N_LANGUAGE (wire-core §1.6: not per request).
//
// The platform's catalogs (core messages and the /api engine's) are JSON files embedded from
// locales/<lang>/<area>.json. Each feature module owns its own keys in the same layout
// (<lang>/*.json in an fs.FS, app.Module.Messages), merged into the process catalog with Add
// when the module is built; a key defined twice is an error. Every key must exist in every
// language: CheckLanguages is the test each catalog owner runs.
package i18n

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"sort"
	"strings"
)

// Languages supported by the catalogs. English is the default (spec/README.md: svc's deviation).
const (
	English = "en"
	Chinese = "zh-CN"
	Default = English
)

// MustSub returns the subtree dir of an embedded catalog (a module's messages/ directory); it
// panics on a malformed dir, which is fixed at build time.
func MustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// ErrDuplicateKey: two catalogs (or two files of one) define the same message key.
var ErrDuplicateKey = errors.New("i18n: message key defined twice")

//go:embed locales
var locales embed.FS

// Catalog renders message keys in one language, falling back to English and then to the key.
type Catalog struct {
	lang     string
	messages map[string]string
	fallback map[string]string
}

// New returns the catalog of lang ("en" or "zh-CN"; "zh", "zh_CN" and "zh-cn" are accepted
// spellings) with the platform's messages and those of modules (each an fs.FS of
// <lang>/*.json, see Add). An empty lang selects English; an unknown one is an error.
func New(lang string, modules ...fs.FS) (*Catalog, error) {
	norm, ok := Normalize(lang)
	if !ok {
		return nil, fmt.Errorf("i18n: unsupported language %q (want %s or %s)", lang, English, Chinese)
	}
	msgs, err := load(platform, norm, nil)
	if err != nil {
		return nil, err
	}
	c := &Catalog{lang: norm, messages: msgs, fallback: msgs}
	if norm != English {
		if c.fallback, err = load(platform, English, nil); err != nil {
			return nil, err
		}
	}
	for _, m := range modules {
		if err := c.Add(m); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// MustNew is New for languages known to be valid (tests, defaults); it panics on error.
func MustNew(lang string, modules ...fs.FS) *Catalog {
	c, err := New(lang, modules...)
	if err != nil {
		panic(err)
	}
	return c
}

// Add merges a module's messages (the files <lang>/*.json of fsys) into the catalog: the
// catalog's language, and English as its fallback. A key the catalog already has is an error
// and leaves the catalog unchanged. Add is for building a server: it must not run while the
// catalog renders messages.
func (c *Catalog) Add(fsys fs.FS) error {
	msgs, err := load(fsys, c.lang, c.messages)
	if err != nil {
		return err
	}
	fallback := msgs
	if c.lang != English {
		if fallback, err = load(fsys, English, c.fallback); err != nil {
			return err
		}
	}
	c.messages, c.fallback = msgs, fallback
	return nil
}

// Normalize maps accepted spellings of a language to its canonical name.
func Normalize(lang string) (string, bool) {
	switch strings.ToLower(strings.ReplaceAll(strings.TrimSpace(lang), "_", "-")) {
	case "", "en", "en-us", "en-gb":
		return English, true
	case "zh", "zh-cn", "zh-hans":
		return Chinese, true
	}
	return "", false
}

// Language returns the canonical language of the catalog.
func (c *Catalog) Language() string { return c.lang }

// Has reports whether key exists in the catalog's language.
func (c *Catalog) Has(key string) bool {
	_, ok := c.messages[key]
	return ok
}

// T renders key with its {{name}} placeholders replaced from args. A key missing from the
// catalog renders from English, and a key missing there renders as the key itself.
func (c *Catalog) T(key string, args map[string]string) string {
	msg, ok := c.messages[key]
	if !ok {
		if msg, ok = c.fallback[key]; !ok {
			return key
		}
	}
	if len(args) == 0 || !strings.Contains(msg, "{{") {
		return msg
	}
	pairs := make([]string, 0, 2*len(args))
	for k, v := range args {
		pairs = append(pairs, "{{"+k+"}}", v)
	}
	return strings.NewReplacer(pairs...).Replace(msg)
}

// Keys lists the platform's keys of a language, sorted (used by the completeness test).
func Keys(lang string) ([]string, error) { return keysOf(platform, lang) }

// CheckLanguages reports an error naming every key of a module's catalog (<lang>/*.json files
// of fsys) that is missing from one of the languages, or a language without files: every
// catalog owner runs it in a test.
func CheckLanguages(fsys fs.FS) error {
	en, err := keysOf(fsys, English)
	if err != nil {
		return err
	}
	zh, err := keysOf(fsys, Chinese)
	if err != nil {
		return err
	}
	var missing []string
	for _, k := range difference(en, zh) {
		missing = append(missing, k+" (missing in "+Chinese+")")
	}
	for _, k := range difference(zh, en) {
		missing = append(missing, k+" (missing in "+English+")")
	}
	if len(missing) > 0 {
		return fmt.Errorf("i18n: keys not in every language: %s", strings.Join(missing, ", "))
	}
	return nil
}

// difference lists the keys of a (sorted) that b (sorted) lacks.
func difference(a, b []string) []string {
	var out []string
	for _, k := range a {
		if _, found := sort.Find(len(b), func(i int) int { return strings.Compare(k, b[i]) }); !found {
			out = append(out, k)
		}
	}
	return out
}

func keysOf(fsys fs.FS, lang string) ([]string, error) {
	msgs, err := load(fsys, lang, nil)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(msgs))
	for k := range msgs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}

// platform is the embedded catalog of the platform's areas (locales/<lang>/*.json).
var platform = MustSub(locales, "locales")

// load reads the files <lang>/*.json of fsys into a copy of base; a key defined twice is an
// error.
func load(fsys fs.FS, lang string, base map[string]string) (map[string]string, error) {
	files, err := fs.Glob(fsys, path.Join(lang, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("i18n: no catalog for %q", lang)
	}
	msgs := maps.Clone(base)
	if msgs == nil {
		msgs = make(map[string]string)
	}
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		var part map[string]string
		if err := json.Unmarshal(b, &part); err != nil {
			return nil, fmt.Errorf("i18n: %s: %w", f, err)
		}
		for k, v := range part {
			if _, dup := msgs[k]; dup {
				return nil, fmt.Errorf("%w: %q (again in %s)", ErrDuplicateKey, k, f)
			}
			msgs[k] = v
		}
	}
	return msgs, nil
}

// Package i18n holds the message catalogs (en, zh-CN) of every message key and renders messages
// in the process-wide language chosen by SVC_I18N_LANGUAGE (wire-core §1.6: not per request).
//
// Catalogs are JSON files embedded from locales/<lang>/<area>.json, one file per module or area
// so each module owns its keys. Every key must exist in every language (a test enforces it).
package i18n

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
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

//go:embed locales
var locales embed.FS

// Catalog renders message keys in one language, falling back to English and then to the key.
type Catalog struct {
	lang     string
	messages map[string]string
	fallback map[string]string
}

// New returns the catalog of lang ("en" or "zh-CN"; "zh", "zh_CN" and "zh-cn" are accepted
// spellings). An empty lang selects English; an unknown one is an error.
func New(lang string) (*Catalog, error) {
	norm, ok := Normalize(lang)
	if !ok {
		return nil, fmt.Errorf("i18n: unsupported language %q (want %s or %s)", lang, English, Chinese)
	}
	msgs, err := load(norm)
	if err != nil {
		return nil, err
	}
	c := &Catalog{lang: norm, messages: msgs, fallback: msgs}
	if norm != English {
		if c.fallback, err = load(English); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// MustNew is New for languages known to be valid (tests, defaults); it panics on error.
func MustNew(lang string) *Catalog {
	c, err := New(lang)
	if err != nil {
		panic(err)
	}
	return c
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

// Keys lists the keys of a language, sorted (used by the completeness test).
func Keys(lang string) ([]string, error) {
	msgs, err := load(lang)
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

func load(lang string) (map[string]string, error) {
	dir := path.Join("locales", lang)
	files, err := fs.Glob(locales, dir+"/*.json")
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("i18n: no catalog for %q", lang)
	}
	msgs := make(map[string]string)
	for _, f := range files {
		b, err := locales.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var part map[string]string
		if err := json.Unmarshal(b, &part); err != nil {
			return nil, fmt.Errorf("i18n: %s: %w", f, err)
		}
		for k, v := range part {
			if _, dup := msgs[k]; dup {
				return nil, fmt.Errorf("i18n: %s: key %q defined twice", f, k)
			}
			msgs[k] = v
		}
	}
	return msgs, nil
}

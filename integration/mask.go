package integration

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// truncatedSuffix ends a capture cut at capture_limit (§10).
const truncatedSuffix = "…(truncated)"

// Always-masked JSON field names and credential headers (§10).
var (
	defaultMaskFields = []string{"password", "token", "secret"}
	credentialHeaders = []string{"authorization", "proxy-authorization", "cookie", "set-cookie"}
)

// masker masks one record's captures: field names (compared lower-cased), credential headers,
// masked query params, and every literal secret value wherever it appears; then it cuts each
// capture at limit bytes.
type masker struct {
	fields  map[string]bool
	secrets []string // literal values to scrub, longest first
	// skeletons are the secrets' letters and digits, lower-cased, for those that have at
	// least skeletonMin of them: what line looks for once separators are ignored.
	skeletons []string
	limit     int
}

// skeletonMin is the fewest letters and digits a secret must have for line to look for it
// with separators ignored; a shorter one would match ordinary text, and is scrubbed only where
// it appears literally.
const skeletonMin = 8

func newMasker(maskFields []string, limit int, secrets []string) *masker {
	m := &masker{fields: map[string]bool{}, limit: limit}
	for _, f := range append(slices.Clone(defaultMaskFields), maskFields...) {
		m.fields[strings.ToLower(f)] = true
	}
	for _, s := range secrets {
		if s != "" && s != MaskedSecret {
			m.secrets = append(m.secrets, s)
		}
	}
	slices.SortFunc(m.secrets, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range m.secrets {
		if k := skeleton(sec); len(k) >= skeletonMin {
			m.skeletons = append(m.skeletons, k)
		}
	}
	return m
}

// skeleton is s's letters and digits, lower-cased: what stays of a secret cut in pieces,
// spaced out, joined with separators or upper-cased.
func skeleton(s string) string {
	var b strings.Builder
	for _, c := range s {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			b.WriteRune(unicode.ToLower(c))
		}
	}
	return b.String()
}

// line masks one console line (issue #42 item 7) by the presence of a secret, not by one
// argument equal to it: a line whose letters and digits, separators ignored, contain a
// secret's is replaced whole by the mask — so a secret printed in pieces, as several
// arguments, character by character or upper-cased, is masked with everything around it.
// Literal occurrences were scrubbed already (body). What it cannot see is a secret transformed
// (reversed, encoded, hashed) or spread over several lines: masking keeps credentials out of
// the log by accident, it is no barrier against the author of a script that can read them.
func (m *masker) line(s string) string {
	if len(m.skeletons) == 0 {
		return s
	}
	k := skeleton(s)
	for _, sec := range m.skeletons {
		if strings.Contains(k, sec) {
			return MaskedSecret
		}
	}
	return s
}

// scrub replaces every literal secret in s.
func (m *masker) scrub(s string) string {
	for _, sec := range m.secrets {
		s = strings.ReplaceAll(s, sec, MaskedSecret)
	}
	return s
}

// value masks a decoded JSON value recursively: masked keys' values become "******", every
// string (keys too) is scrubbed of secrets.
func (m *masker) value(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if m.fields[strings.ToLower(k)] {
				out[m.scrub(k)] = MaskedSecret
				continue
			}
			out[m.scrub(k)] = m.value(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = m.value(e)
		}
		return out
	case string:
		return m.scrub(t)
	}
	return v
}

// capture is the stored form of a JSON value: masked, encoded, and when longer than the limit
// a JSON string of its first bytes and truncatedSuffix. Nil stays nil.
func (m *masker) capture(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		v = string(raw) // not JSON: kept as text
	}
	enc, _ := json.Marshal(m.value(v)) // decoded JSON re-encodes
	if len(enc) <= m.limit {
		return enc
	}
	out, _ := json.Marshal(cut(string(enc), m.limit))
	return out
}

// body is the stored form of an HTTP body: masked as JSON when it is JSON, scrubbed, then cut.
func (m *masker) body(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		if enc, err := json.Marshal(m.value(v)); err == nil {
			s = string(enc)
		}
	}
	s = m.scrub(s)
	if len(s) <= m.limit {
		return s
	}
	return cut(s, m.limit)
}

// headers lower-cases names and masks credential headers and masked names.
func (m *masker) headers(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		k = strings.ToLower(k)
		if m.fields[k] || slices.Contains(credentialHeaders, k) {
			out[k] = MaskedSecret
			continue
		}
		out[k] = m.scrub(v)
	}
	return out
}

// url masks query params whose names are masked, then scrubs secrets.
func (m *masker) url(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return m.scrub(raw)
	}
	q := u.Query()
	for k := range q {
		if m.fields[strings.ToLower(k)] {
			q[k] = []string{MaskedSecret}
		}
	}
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return m.scrub(u.String())
}

func isCredentialHeader(name string) bool {
	return slices.Contains(credentialHeaders, strings.ToLower(name))
}

// cut keeps the first n bytes of s, at a character boundary, and appends truncatedSuffix.
func cut(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + truncatedSuffix
}

// trace masks every exchange of a wire trace.
func (m *masker) trace(in []HTTPExchange) []HTTPExchange {
	if in == nil {
		return nil
	}
	out := make([]HTTPExchange, len(in))
	for i, x := range in {
		out[i] = HTTPExchange{Method: x.Method, URL: m.url(x.URL), RequestHeaders: m.headers(x.RequestHeaders),
			RequestBody: m.body(x.RequestBody), Status: x.Status, ResponseHeaders: m.headers(x.ResponseHeaders),
			ResponseBody: m.body(x.ResponseBody), DurationMs: x.DurationMs, Error: m.scrub(x.Error)}
	}
	return out
}

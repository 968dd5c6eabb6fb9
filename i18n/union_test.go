package i18n

import (
	"testing"
	"testing/fstest"
)

// TestUnion: a catalog over the union of two module catalogs holds both files' keys per
// language, and a key defined in both is still a duplicate.
func TestUnion(t *testing.T) {
	t.Parallel()
	a := fstest.MapFS{"en/a.json": {Data: []byte(`{"a_one":"One"}`)}, "zh-CN/a.json": {Data: []byte(`{"a_one":"一"}`)}}
	b := fstest.MapFS{"en/b.json": {Data: []byte(`{"b_two":"Two {{n}}"}`)}, "zh-CN/b.json": {Data: []byte(`{"b_two":"二 {{n}}"}`)}}
	c, err := New("en", Union(a, b))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.T("a_one", nil) + "|" + c.T("b_two", map[string]string{"n": "2"}); got != "One|Two 2" {
		t.Errorf("messages = %q", got)
	}
	if err := CheckLanguages(Union(a, b)); err != nil {
		t.Errorf("CheckLanguages = %v", err)
	}
	dup := fstest.MapFS{"en/c.json": {Data: []byte(`{"a_one":"again"}`)}}
	if _, err := New("en", Union(a, dup)); err == nil {
		t.Error("a key in both file systems loaded without error")
	}
	if _, err := Union(a, b).Open("en/none.json"); err == nil {
		t.Error("Open of a missing file succeeded")
	}
}

package i18n

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCatalogsHaveTheSameKeys(t *testing.T) {
	en, err := Keys(English)
	if err != nil {
		t.Fatal(err)
	}
	zh, err := Keys(Chinese)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(en, zh); diff != "" {
		t.Errorf("en and zh-CN keys differ (-en +zh-CN):\n%s", diff)
	}
}

func TestTranslate(t *testing.T) {
	tests := []struct {
		lang, key string
		args      map[string]string
		want      string
	}{
		{"en", "ok", nil, "Success"},
		{"zh-CN", "ok", nil, "成功"},
		{"zh_cn", "not_found", nil, "迷路了"},
		{"en", "validation_required", map[string]string{"field": "filename"}, "filename is required"},
		{"en", "no_such_key", nil, "no_such_key"},
	}
	for _, tt := range tests {
		t.Run(tt.lang+"/"+tt.key, func(t *testing.T) {
			if got := MustNew(tt.lang).T(tt.key, tt.args); got != tt.want {
				t.Errorf("T(%q) = %q, want %q", tt.key, got, tt.want)
			}
		})
	}
}

func TestUnknownLanguage(t *testing.T) {
	if _, err := New("fr"); err == nil {
		t.Error("New(fr) succeeded, want an error")
	}
}

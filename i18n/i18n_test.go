package i18n

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

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

func TestAddModuleMessages(t *testing.T) {
	mod := fstest.MapFS{
		"en/shop.json":    {Data: []byte(`{"shop_closed":"The shop is closed"}`)},
		"zh-CN/shop.json": {Data: []byte(`{"shop_closed":"商店已关闭"}`)},
	}
	zh := MustNew(Chinese)
	if err := zh.Add(mod); err != nil {
		t.Fatalf("Add: %v", err)
	}
	if got, want := zh.T("shop_closed", nil), "商店已关闭"; got != want {
		t.Errorf("T(shop_closed) = %q, want %q", got, want)
	}
	if got, want := zh.T("ok", nil), "成功"; got != want {
		t.Errorf("T(ok) after Add = %q, want %q", got, want)
	}
	if err := zh.Add(mod); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("second Add = %v, want ErrDuplicateKey", err)
	}
	clash := fstest.MapFS{
		"en/x.json":    {Data: []byte(`{"ok":"fine"}`)},
		"zh-CN/x.json": {Data: []byte(`{"ok":"好"}`)},
	}
	if _, err := New(English, clash); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("New with a platform key = %v, want ErrDuplicateKey", err)
	}
	if got := zh.T("shop_closed", nil); got != "商店已关闭" {
		t.Errorf("a failed Add changed the catalog: %q", got)
	}
}

func TestEnglishFallbackOfModuleMessages(t *testing.T) {
	mod := fstest.MapFS{
		"en/m.json":    {Data: []byte(`{"only_en":"English only","both":"Both"}`)},
		"zh-CN/m.json": {Data: []byte(`{"both":"两者"}`)},
	}
	c := MustNew(Chinese, mod)
	if got, want := c.T("only_en", nil), "English only"; got != want {
		t.Errorf("T(only_en) = %q, want the English fallback %q", got, want)
	}
	err := CheckLanguages(mod)
	if err == nil || !strings.Contains(err.Error(), "only_en (missing in zh-CN)") {
		t.Errorf("CheckLanguages = %v, want only_en reported missing in zh-CN", err)
	}
	if err := CheckLanguages(fstest.MapFS{"en/m.json": {Data: []byte(`{}`)}}); err == nil {
		t.Error("CheckLanguages accepted a catalog without zh-CN files")
	}
}

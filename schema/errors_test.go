package schema

import (
	"testing"

	"github.com/svc-framework/svc/i18n"
)

func TestTableNotFoundMessage(t *testing.T) {
	t.Parallel()
	if ErrTableNotFound.Code != 2300 || ErrTableNotFound.HTTPStatus() != 200 {
		t.Errorf("ErrTableNotFound = %d/%d, want 2300/200", ErrTableNotFound.Code, ErrTableNotFound.HTTPStatus())
	}
	for lang, want := range map[string]string{"en": "Table not found", "zh-CN": "数据表不存在"} {
		c := i18n.MustNew(lang, Messages())
		if !c.Has(ErrTableNotFound.Key) || c.T(ErrTableNotFound.Key, nil) != want {
			t.Errorf("%s: %q = %q, want %q", lang, ErrTableNotFound.Key, c.T(ErrTableNotFound.Key, nil), want)
		}
	}
}

package schema

import (
	"testing"

	"github.com/svc-framework/svc/i18n"
)

// TestMessagesInEveryLanguage: every message key of the module exists in en and zh-CN.
func TestMessagesInEveryLanguage(t *testing.T) {
	t.Parallel()
	if err := i18n.CheckLanguages(Messages()); err != nil {
		t.Error(err)
	}
}

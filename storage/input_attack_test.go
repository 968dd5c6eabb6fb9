package storage_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// TestInvalidIdentifierInput (issue #11 item 5): a NUL or other control character, invalid
// UTF-8 or an overlong value in claimId, a resolve key or any string param answers 400/1400 on
// every database — never 500/1900 from a database that refuses the text.
func TestInvalidIdentifierInput(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		srv := svctest.New(t, svctest.WithDB(kind))
		as := svctest.As(svctest.User("u1"))
		badUTF8 := json.RawMessage("{\"claimId\":\"a\xff\xfeb\"}")
		tests := []struct {
			name     string
			resource string
			action   string
			params   any
		}{
			{"claimId with NUL (list_parts)", "sys/storage", "list_parts", map[string]any{"claimId": "019a\x00x"}},
			{"claimId with NUL (complete_upload)", "sys/storage", "complete_upload", map[string]any{"claimId": "\x00"}},
			{"claimId with NUL (abort_upload)", "sys/storage", "abort_upload", map[string]any{"claimId": "a\x00"}},
			{"claimId with a control character", "sys/storage", "abort_upload", map[string]any{"claimId": "a\x1bb"}},
			{"claimId with a C1 control character", "sys/storage", "list_parts", map[string]any{"claimId": "a\u0085b"}},
			{"claimId with invalid UTF-8", "sys/storage", "list_parts", badUTF8},
			{"claimId too long", "sys/storage", "list_parts", map[string]any{"claimId": strings.Repeat("a", 129)}},
			{"filename with NUL", "sys/storage", "init_upload", map[string]any{"filename": "a\x00.txt", "size": 1}},
			{"contentType with NUL", "sys/storage", "init_upload", map[string]any{"filename": "a.txt", "size": 1, "contentType": "text/\x00"}},
			{"resolve key with NUL", "sys/storage/file", "resolve", map[string]any{"keys": []string{"pub/a\x00b"}}},
			{"resolve key with a newline", "sys/storage/file", "resolve", map[string]any{"keys": []string{"ok/key", "pub/a\nb"}}},
			{"resolve key too long", "sys/storage/file", "resolve", map[string]any{"keys": []string{strings.Repeat("k", 513)}}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := srv.Call(t, tt.resource, tt.action, tt.params, as)
				if r.Status != 400 || r.Code != rpc.CodeBadRequest {
					t.Errorf("status/code = %d/%d (%s), want 400/%d", r.Status, r.Code, r.Message, rpc.CodeBadRequest)
				}
			})
		}
		// the same operations with clean input are not refused as bad requests
		if r := srv.Call(t, "sys/storage/file", "resolve", map[string]any{"keys": []string{"pub/escaped\\u0000-not-a-nul"}}, as); r.Status != 200 || r.Code != 0 {
			t.Errorf("resolve of a clean key: status/code = %d/%d, want 200/0", r.Status, r.Code)
		}
		if r := srv.Call(t, "sys/storage", "list_parts", map[string]any{"claimId": "019a0000-0000-7000-8000-000000000000"}, as); r.Status == 400 || r.Status >= 500 {
			t.Errorf("list_parts of a clean unknown claim: status/code = %d/%d, want a business answer", r.Status, r.Code)
		}
	})
}

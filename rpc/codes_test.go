package rpc_test

import (
	"testing"

	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
)

// TestCodeTable holds the cross-cutting and api error templates to wire-core §2.2: code, HTTP
// status, and a message key present in both catalogs.
func TestCodeTable(t *testing.T) {
	tests := []struct {
		err          *rpc.Error
		code, status int
	}{
		{rpc.ErrAccessDenied, 1100, 403},
		{rpc.ErrNotFound, 1200, 404},
		{rpc.ErrUnsupportedMediaType, 1300, 415},
		{rpc.ErrBadRequest, 1400, 400},
		{rpc.ErrTooManyRequests, 1401, 429},
		{rpc.ErrRequestTimeout, 1402, 408},
		{rpc.ErrNotImplemented, 1500, 501},
		{rpc.ErrDangerousSQL, 1600, 200},
		{rpc.ErrUnknown, 1900, 500},
		{rpc.ErrDefault, 2000, 200},
		{rpc.ErrRecordNotFound, 2001, 200},
		{rpc.ErrRecordAlreadyExists, 2002, 200},
		{rpc.ErrForeignKeyViolation, 2003, 200},
		{rpc.ErrInvalidRequestParams, 1400, 400},
		{rpc.ErrInvalidRequestMeta, 1400, 400},
		{rpc.ErrInvalidRequestBody, 1400, 400},
		{rpc.ErrBodyEncodingRequired, 1400, 400},
		{rpc.ErrUnsupportedBodyEncoding, 1400, 400},
		{rpc.ErrBodyDecodeFailed, 1400, 400},
		{rpc.ErrBodyTooLarge, 1400, 413},
	}
	catalogs := []*i18n.Catalog{i18n.MustNew("en"), i18n.MustNew("zh-CN")}
	for _, tt := range tests {
		if tt.err.Code != tt.code || tt.err.HTTPStatus() != tt.status {
			t.Errorf("%s: %d/%d, want %d/%d", tt.err.Key, tt.err.HTTPStatus(), tt.err.Code, tt.status, tt.code)
		}
		for _, c := range catalogs {
			if !c.Has(tt.err.Key) {
				t.Errorf("code %d: key %q missing from the %s catalog", tt.code, tt.err.Key, c.Language())
			}
		}
	}
}

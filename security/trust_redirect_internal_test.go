package security

import "testing"

// TestWithTrustCode: the gateway's redirect query (wire-core §5.9) keeps the target's raw query
// byte for byte, removes pairs named app_id or code (by the unescaped name) and appends the
// escaped app_id and code.
func TestWithTrustCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw, appID, want string
	}{
		{"no query", "", "crm", "app_id=crm&code=C"},
		{"kept as is", "a=1&b=x;y&flag&x=a+b&e=%2F", "crm", "a=1&b=x;y&flag&x=a+b&e=%2F&app_id=crm&code=C"},
		{"existing app_id and code removed", "app_id=evil&x=1&code=old&code=older", "crm", "x=1&app_id=crm&code=C"},
		{"bare names removed", "app_id&code&y", "crm", "y&app_id=crm&code=C"},
		{"escaped names removed", "app%5Fid=evil&c%6Fde=old&z=1", "crm", "z=1&app_id=crm&code=C"},
		{"similar names kept", "app_id_x=1&codes=2&code+=3&CODE=4", "crm", "app_id_x=1&codes=2&code+=3&CODE=4&app_id=crm&code=C"},
		{"bad escape kept", "%zz=1&app_id=x", "crm", "%zz=1&app_id=crm&code=C"},
		{"inner empty pair kept, trailing & not doubled", "a=1&&b=2&", "crm", "a=1&&b=2&app_id=crm&code=C"},
		{"only app_id and code", "code=1&app_id=2", "crm", "app_id=crm&code=C"},
		{"app id escaped", "a=1", "a b&c", "a=1&app_id=a+b%26c&code=C"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := withTrustCode(tt.raw, tt.appID, "C"); got != tt.want {
				t.Errorf("withTrustCode(%q) = %q, want %q", tt.raw, got, tt.want)
			}
		})
	}
}

package design

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPermissions(t *testing.T) {
	t.Parallel()
	perms := map[string]Permission{"amount": PermEditable, "reason": PermRequired, "items": PermHidden}
	if got := PermissionOf(perms, "title"); got != PermVisible {
		t.Errorf("absent key = %s, want visible", got)
	}
	if got := PermissionOf(perms, "items"); got != PermHidden {
		t.Errorf("items = %s, want hidden", got)
	}

	stored := map[string]any{"amount": 1.0, "reason": "old", "title": "t"}
	submitted := map[string]any{"amount": 2.0, "reason": "new", "title": "hacked", "items": []any{}}
	want := map[string]any{"amount": 2.0, "reason": "new", "title": "t"}
	if diff := cmp.Diff(want, MergeWritable(stored, submitted, perms)); diff != "" {
		t.Errorf("MergeWritable (-want +got):\n%s", diff)
	}
	if stored["amount"] != 1.0 {
		t.Error("MergeWritable modified its input")
	}
	if diff := cmp.Diff(stored, MergeWritable(stored, submitted, nil)); diff != "" {
		t.Errorf("a node without permissions grants no writes:\n%s", diff)
	}

	cases := []struct {
		in   []Permission
		want Permission
	}{
		{nil, PermHidden},
		{[]Permission{PermHidden, PermVisible}, PermVisible},
		{[]Permission{PermEditable, PermVisible}, PermEditable},
		{[]Permission{PermRequired, PermEditable, PermHidden}, PermRequired},
	}
	for _, c := range cases {
		if got := MaxPermission(c.in...); got != c.want {
			t.Errorf("MaxPermission(%v) = %s, want %s", c.in, got, c.want)
		}
	}
	if PermRequired.ReadOnly() != PermVisible || PermHidden.ReadOnly() != PermHidden {
		t.Error("ReadOnly must clamp writes to visible and keep hidden")
	}

	fields := testFields()
	data := map[string]any{"amount": 1.0, "reason": "r", "items": []any{}, "legacy": true}
	perm := func(k string) Permission { return PermissionOf(perms, k) }
	if diff := cmp.Diff(map[string]any{"amount": 1.0, "reason": "r"}, StripHidden(fields, data, perm, false)); diff != "" {
		t.Errorf("StripHidden (-want +got):\n%s", diff)
	}
	if got := StripHidden(fields, data, perm, true); got["legacy"] != true || got["items"] != nil {
		t.Errorf("StripHidden(keepUnknown) = %v", got)
	}
}

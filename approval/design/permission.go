package design

// Field permissions at run time (wire-approval §8): what a node lets its assignees write, and
// what a viewer may read.

// PermissionOf returns a node's permission for a form field: the node's entry, visible when the
// node's map has no entry for the key.
func PermissionOf(perms map[string]Permission, key string) Permission {
	if p, ok := perms[key]; ok {
		return p
	}
	return PermVisible
}

// MergeWritable returns stored form data with the submitted values of the fields the node marks
// editable or required laid over it; every other submitted key is dropped (a node without a
// map grants no writes). Neither input is modified.
func MergeWritable(stored, submitted map[string]any, perms map[string]Permission) map[string]any {
	out := make(map[string]any, len(stored)+len(submitted))
	for k, v := range stored {
		out[k] = v
	}
	for k, v := range submitted {
		if perms[k].Writable() {
			out[k] = v
		}
	}
	return out
}

// MaxPermission merges the permissions a viewer holds through several roles (own task, CC,
// applicant) on the lattice hidden < visible < editable < required.
func MaxPermission(ps ...Permission) Permission {
	best := PermHidden
	for _, p := range ps {
		if p.Rank() > best.Rank() {
			best = p
		}
	}
	return best
}

// ReadOnly clamps a permission for a context that cannot write (a CC recipient, a finished
// task): editable and required read as visible.
func (p Permission) ReadOnly() Permission {
	if p.Writable() {
		return PermVisible
	}
	return p
}

// StripHidden returns form data without the fields perm reports hidden for the viewer; keys
// that are not form fields are kept only when keepUnknown is set. The input is not modified.
func StripHidden(fields []FormField, formData map[string]any, perm func(key string) Permission, keepUnknown bool) map[string]any {
	known := make(map[string]bool, len(fields))
	for i := range fields {
		known[fields[i].Key] = true
	}
	out := make(map[string]any, len(formData))
	for k, v := range formData {
		if known[k] && perm(k) == PermHidden {
			continue
		}
		if !known[k] && !keepUnknown {
			continue
		}
		out[k] = v
	}
	return out
}

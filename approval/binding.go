package approval

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// identifier is the rule of a business-binding table or column name (wire-approval §6.3).
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// InstanceStatuses are the instance statuses a statusMapping may translate (§4).
var InstanceStatuses = []string{InstanceRunning, InstanceApproved, InstanceRejected, InstanceWithdrawn, InstanceReturned, InstanceTerminated}

// checkBinding validates a business binding in the original's order (§6.3): required parts
// (40011), identifiers (40008), one column per role (40016), the status mapping (40020), then the
// live schema: the table and every column exist (40018) and the key columns are exactly a
// primary or unique key whose columns are all NOT NULL (40019). Each refusal's {{detail}} is
// what the designer named — a field, a role, table.column — never prose, so the catalogue's
// sentence reads in the server's language.
func (s *Service) checkBinding(ctx context.Context, b *BusinessBinding) error {
	if b == nil {
		return Detail(ErrBindingIncomplete, "businessBinding")
	}
	for _, req := range []struct{ name, value string }{{"tableName", b.TableName}, {"statusColumn", b.StatusColumn},
		{"instanceIdColumn", b.InstanceIDColumn}} {
		if strings.TrimSpace(req.value) == "" {
			return Detail(ErrBindingIncomplete, req.name)
		}
	}
	if len(b.KeyColumns) == 0 {
		return Detail(ErrBindingIncomplete, "keyColumns")
	}
	roles := b.columns()
	for _, name := range append([]string{b.TableName}, columnNames(roles)...) {
		if !identifier.MatchString(name) {
			return Detail(ErrInvalidBusinessIdentifier, fmt.Sprintf("%q", name))
		}
	}
	seen := map[string]string{}
	for _, r := range roles {
		col := strings.ToLower(r.column)
		if other, ok := seen[col]; ok {
			return Detail(ErrBindingColumnsConflict, fmt.Sprintf("%s, %s: %s", other, r.role, r.column))
		}
		seen[col] = r.role
	}
	for status, value := range b.StatusMapping {
		if !slices.Contains(InstanceStatuses, status) {
			return Detail(ErrBindingStatusMappingInvalid, fmt.Sprintf("%q", status))
		}
		if strings.TrimSpace(value) == "" {
			return Detail(ErrBindingStatusMappingInvalid, fmt.Sprintf("%q: \"\"", status))
		}
	}
	return s.checkBindingSchema(ctx, b, roles)
}

// checkBindingSchema checks the binding against the live table.
func (s *Service) checkBindingSchema(ctx context.Context, b *BusinessBinding, roles []bindingColumn) error {
	if s.tables == nil {
		return Detail(ErrBindingSchemaInvalid, b.TableName).Wrap(errors.New("approval: no table inspector is configured (Options.Tables)"))
	}
	t, err := s.tables.InspectTable(ctx, b.TableName)
	if err != nil {
		return fmt.Errorf("approval: inspect %s: %w", b.TableName, err)
	}
	if t == nil {
		return Detail(ErrBindingSchemaInvalid, b.TableName)
	}
	cols := make(map[string]bool, len(t.Columns))
	for name, nullable := range t.Columns {
		cols[strings.ToLower(name)] = nullable
	}
	for _, r := range roles {
		if _, ok := cols[strings.ToLower(r.column)]; !ok {
			return Detail(ErrBindingSchemaInvalid, fmt.Sprintf("%s.%s (%s)", b.TableName, r.column, r.role))
		}
	}
	want := normalized(b.KeyColumns)
	for _, key := range append([][]string{t.PrimaryKey}, t.UniqueKeys...) {
		if len(key) > 0 && slices.Equal(normalized(key), want) {
			for _, c := range want {
				if cols[c] {
					return Detail(ErrBindingKeyNotUnique, b.TableName+"."+c)
				}
			}
			return nil
		}
	}
	return Detail(ErrBindingKeyNotUnique, fmt.Sprintf("%s (%s)", b.TableName, strings.Join(b.KeyColumns, ", ")))
}

// bindingColumn is one column a binding names and the role it names it in.
type bindingColumn struct{ role, column string }

// columns lists every column of the binding with its role; optional ones only when set.
func (b *BusinessBinding) columns() []bindingColumn {
	out := make([]bindingColumn, 0, len(b.KeyColumns)+4)
	for _, k := range b.KeyColumns {
		out = append(out, bindingColumn{"keyColumns", k})
	}
	out = append(out, bindingColumn{"statusColumn", b.StatusColumn}, bindingColumn{"instanceIdColumn", b.InstanceIDColumn})
	if b.StartedAtColumn != "" {
		out = append(out, bindingColumn{"startedAtColumn", b.StartedAtColumn})
	}
	if b.FinishedAtColumn != "" {
		out = append(out, bindingColumn{"finishedAtColumn", b.FinishedAtColumn})
	}
	return out
}

func columnNames(cols []bindingColumn) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.column
	}
	return out
}

// normalized is the sorted lower-case set of names.
func normalized(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.ToLower(n)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

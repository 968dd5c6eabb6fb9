package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// loadOne loads the first row of T matching where: missing is notFound, disabled (per
// enabled) is off unless anyState.
func loadOne[T any](ctx context.Context, s *Service, enabled func(*T) bool, notFound, off error, anyState bool, where string, args ...any) (*T, error) {
	var row T
	err := s.db.NewSelect().Model(&row).Where(where, args...).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	if !enabled(&row) && !anyState {
		return nil, off
	}
	return &row, nil
}

// loadContract loads a contract by code: missing 2600, disabled 2601 (unless anyState).
func (s *Service) loadContract(ctx context.Context, code string, anyState bool) (*Contract, error) {
	return loadOne(ctx, s, func(c *Contract) bool { return c.IsEnabled }, ErrContractNotFound, ErrContractDisabled, anyState, "code = ?", code)
}

// loadSystem loads a system by code: missing 2602, disabled 2603 (unless anyState).
func (s *Service) loadSystem(ctx context.Context, code string, anyState bool) (*System, error) {
	return loadOne(ctx, s, func(c *System) bool { return c.IsEnabled }, ErrSystemNotFound, ErrSystemDisabled, anyState, "code = ?", code)
}

// loadAdapter loads the adapter of (system, contract, direction): missing 2604, disabled 2605
// (unless anyState).
func (s *Service) loadAdapter(ctx context.Context, systemID, contractID, direction string, anyState bool) (*Adapter, error) {
	return loadOne(ctx, s, func(a *Adapter) bool { return a.IsEnabled }, ErrAdapterNotFound, ErrAdapterDisabled, anyState,
		"system_id = ? AND contract_id = ? AND direction = ?", systemID, contractID, direction)
}

// RouteResolver picks the system code serving a contract under a route key (wire-integration
// §7 step 3). The host may replace the default with Options.Routes.
type RouteResolver interface {
	Resolve(ctx context.Context, contract *Contract, routeKey string) (string, error)
}

// dbRoutes is the default resolver: enabled itg_route rows with the key and the contract or
// the wildcard; the exact contract row beats the wildcard; none is 2606. System enablement is
// the invoker's check, not the resolver's.
type dbRoutes struct{ s *Service }

var _ RouteResolver = dbRoutes{}

func (r dbRoutes) Resolve(ctx context.Context, c *Contract, key string) (string, error) {
	var rows []Route
	err := r.s.db.NewSelect().Model(&rows).Where("route_key = ? AND is_enabled = ?", key, true).
		Where("contract_id IN (?, '')", c.ID).Scan(ctx)
	if err != nil {
		return "", err
	}
	var pick *Route
	for i := range rows {
		if rows[i].ContractID == c.ID || pick == nil {
			pick = &rows[i]
		}
	}
	if pick == nil {
		return "", ErrRouteNotFound
	}
	var sys System
	err = r.s.db.NewSelect().Model(&sys).Column("code").Where("id = ?", pick.SystemID).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrRouteNotFound
	}
	return sys.Code, err
}

// schemas compiles contract schemas once per content.
type schemas struct {
	mu  sync.Mutex
	m   map[[32]byte]*jsonschema.Schema
	cap int
}

func newSchemas() *schemas { return &schemas{m: map[[32]byte]*jsonschema.Schema{}, cap: 1024} }

// check validates value against schema (empty: no check); a failure names the first
// violation. A schema that does not compile fails the check too.
func (c *schemas) check(schema, value json.RawMessage) error {
	if len(bytes.TrimSpace(schema)) == 0 || bytes.Equal(bytes.TrimSpace(schema), []byte("null")) {
		return nil
	}
	key := sha256.Sum256(schema)
	c.mu.Lock()
	sch := c.m[key]
	c.mu.Unlock()
	if sch == nil {
		var err error
		if sch, err = compileJSONSchema(schema); err != nil {
			return fmt.Errorf("schema: %v", err)
		}
		c.mu.Lock()
		if len(c.m) >= c.cap {
			clear(c.m)
		}
		c.m[key] = sch
		c.mu.Unlock()
	}
	if len(bytes.TrimSpace(value)) == 0 {
		value = json.RawMessage("null")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return err
	}
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(firstViolation(ve))
		}
		return err
	}
	return nil
}

// firstViolation is the deepest first cause of a validation error, located.
func firstViolation(ve *jsonschema.ValidationError) string {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	loc := "/"
	if len(ve.InstanceLocation) > 0 {
		loc = ""
		for _, p := range ve.InstanceLocation {
			loc += "/" + p
		}
	}
	return fmt.Sprintf("at %s: %s", loc, ve.ErrorKind.LocalizedString(schemaPrinter))
}

var schemaPrinter = message.NewPrinter(language.English)

// canonical is the JSON round trip of an input value (json.RawMessage passes through
// compacted); a value that does not serialize is an error.
func canonical(v any) (json.RawMessage, error) {
	var raw []byte
	switch t := v.(type) {
	case json.RawMessage:
		raw = t
	case []byte:
		raw = t
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("integration: input does not serialize as JSON: %w", err)
		}
		raw = b
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null"), nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("integration: input is not JSON: %w", err)
	}
	return b.Bytes(), nil
}

package integration

import (
	"context"
	"github.com/svc-framework/svc/db"
	"net/url"
	"strings"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// SystemSearch filters systems: code and name contain, isEnabled equal.
type SystemSearch struct {
	Code      string `json:"code"`
	Name      string `json:"name"`
	IsEnabled *bool  `json:"isEnabled"`
}

// SystemParams are create and update's params (wire-integration §5.2).
type SystemParams struct {
	ID               string            `json:"id"`
	Code             string            `json:"code"`
	Name             string            `json:"name"`
	BaseURL          string            `json:"baseUrl"`
	OutboundAuth     *AuthConfig       `json:"outboundAuth"`
	OutboundEnvelope *EnvelopeConfig   `json:"outboundEnvelope"`
	InboundAuth      *AuthConfig       `json:"inboundAuth"`
	DataSource       *DataSourceConfig `json:"dataSource"`
	Params           map[string]string `json:"params"`
	TimeoutMs        int               `json:"timeoutMs"`
	Retry            *RetryPolicy      `json:"retry"`
	IsEnabled        *bool             `json:"isEnabled"`
}

// Validate: code and name are required (400/1400).
func (p *SystemParams) Validate() error { return required("code", p.Code, "name", p.Name) }

// Data-source modes a system may declare (wire-integration §4; the kinds are db.DeclaredKind).
var dataSourceModes = map[string]bool{"": true, "read_only": true, "read_write": true}

func (s *Service) systemResource() rpc.Resource {
	r := &crud.Resource[System, *System, SystemSearch, SystemParams]{
		Query: crud.Query[System, SystemSearch]{Name: "integration/system", Permission: "integration.system", DB: s.db,
			Search: crud.NewSearch(
				crud.Contains("code", func(q *SystemSearch) string { return q.Code }),
				crud.Contains("name", func(q *SystemSearch) string { return q.Name }),
				crud.EqPtr("is_enabled", func(q *SystemSearch) *bool { return q.IsEnabled }),
			).Sortable("code", "name"),
			View: s.maskSystem},
		Clock: s.clock, ID: func(p *SystemParams) string { return p.ID },
		Build: func(_ context.Context, _ bun.IDB, p *SystemParams, old *System) (*System, error) {
			return s.buildSystem(p, old)
		},
	}
	return r.Resource()
}

// buildSystem runs the save pipeline of wire-integration §5.2 in its order: outbound scheme
// known (2614), auth shapes (2617), secrets sealed with "******" kept (2617/2620), base URL
// (2619), data source (2620), envelope (2625).
func (s *Service) buildSystem(p *SystemParams, old *System) (*System, error) {
	if err := s.checkAuthOf(p.OutboundAuth, true); err != nil {
		return nil, err
	}
	if err := s.checkAuthOf(p.InboundAuth, false); err != nil {
		return nil, err
	}
	var oldOut, oldIn *AuthConfig
	var oldDS *DataSourceConfig
	if old != nil {
		oldOut, oldIn, oldDS = old.OutboundAuth, old.InboundAuth, old.DataSource
	}
	if err := s.secrets.sealAuth(p.OutboundAuth, oldOut, s.outAuth.sensitive); err != nil {
		return nil, err
	}
	if err := s.secrets.sealAuth(p.InboundAuth, oldIn, s.inAuth.sensitive); err != nil {
		return nil, err
	}
	if p.BaseURL != "" {
		if u, err := url.Parse(p.BaseURL); err != nil || !u.IsAbs() || u.Host == "" {
			return nil, ErrInvalidBaseURL
		}
	}
	if err := s.checkDataSource(p.DataSource, oldDS); err != nil {
		return nil, err
	}
	if env := p.OutboundEnvelope; env != nil {
		switch {
		case p.BaseURL == "":
			return nil, detail(ErrInvalidEnvelope, "an envelope needs baseUrl")
		case strings.TrimSpace(env.Request) == "" && strings.TrimSpace(env.Response) == "":
			return nil, detail(ErrInvalidEnvelope, "an envelope needs a request or a response script")
		}
		if err := s.engine.checkEnvelope(env); err != nil {
			return nil, err
		}
	}
	sys := &System{Code: p.Code, Name: p.Name, BaseURL: p.BaseURL, OutboundAuth: p.OutboundAuth,
		OutboundEnvelope: p.OutboundEnvelope, InboundAuth: p.InboundAuth, DataSource: p.DataSource,
		Params: p.Params, TimeoutMs: p.TimeoutMs, Retry: p.Retry, IsEnabled: enabled(p.IsEnabled)}
	// Kept secrets must open with the configured key: a key that changed (or went missing)
	// since they were stored is a configuration fault (2617), caught at save, not at first use.
	if _, err := s.secrets.OpenSystem(sys); err != nil {
		return nil, detail(ErrInvalidAuthParams, err.Error())
	}
	return sys, nil
}

// checkAuthOf checks an authentication of one direction: a host scheme only exists (its
// params are its own business, checked when applied); a built-in one has its shape checked
// (2614/2617) and, for script, its script compiled (2617).
func (s *Service) checkAuthOf(a *AuthConfig, outbound bool) error {
	set := s.inAuth
	if outbound {
		set = s.outAuth
	}
	if a == nil || set.outbound[a.Scheme] != nil || set.inbound[a.Scheme] != nil {
		return nil
	}
	if err := checkAuth(a, set.sensitive, outbound); err != nil {
		return err
	}
	if a.Scheme == "script" {
		if err := s.engine.CheckScript(a.Script); err != nil {
			return detail(ErrInvalidAuthParams, "script: "+scriptMessage(err))
		}
	}
	return nil
}

// checkDataSource validates a data source and seals its password (2620).
func (s *Service) checkDataSource(ds, old *DataSourceConfig) error {
	if ds == nil {
		return nil
	}
	switch {
	case ds.Kind == "":
		return detail(ErrInvalidDataSource, "kind is required")
	case !db.DeclaredKind(ds.Kind):
		return detail(ErrInvalidDataSource, "unknown kind "+ds.Kind)
	case !dataSourceModes[ds.Mode]:
		return detail(ErrInvalidDataSource, "mode must be read_only or read_write")
	}
	var stored string
	if old != nil {
		stored = old.Password
	}
	pw, err := s.secrets.keep(ds.Password, stored)
	if err != nil {
		return detail(ErrInvalidDataSource, "password is masked but has no stored value")
	}
	ds.Password = pw
	return nil
}

// maskSystem is a system as answered: every secret "******" (§9).
func (s *Service) maskSystem(sys *System) *System {
	out := *sys
	out.OutboundAuth = maskAuth(sys.OutboundAuth, s.outAuth.sensitive)
	out.InboundAuth = maskAuth(sys.InboundAuth, s.inAuth.sensitive)
	if sys.DataSource != nil {
		ds := *sys.DataSource
		ds.Password = mask(ds.Password)
		out.DataSource = &ds
	}
	return &out
}

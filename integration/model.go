package integration

import (
	"encoding/json"

	"github.com/svc-framework/svc/crud"
	"github.com/uptrace/bun"
)

// Directions of adapters, logs and statistics.
const (
	DirectionOutbound = "outbound"
	DirectionInbound  = "inbound"
)

// MaskedSecret replaces every stored secret in responses; submitted on update it keeps the
// stored value (wire-integration §9).
const MaskedSecret = "******"

// Contract is one standard operation (itg_contract, wire-integration §3, §4).
type Contract struct {
	bun.BaseModel `bun:"table:itg_contract,alias:itg_contract"`
	crud.Audited
	Code         string            `bun:"code" json:"code"`
	Name         string            `bun:"name" json:"name"`
	Description  *string           `bun:"description" json:"description"`
	Labels       map[string]string `bun:"labels,type:json,nullzero" json:"labels,omitempty"`
	InputSchema  json.RawMessage   `bun:"input_schema,type:json,nullzero" json:"inputSchema"`
	OutputSchema json.RawMessage   `bun:"output_schema,type:json,nullzero" json:"outputSchema"`
	IsEnabled    bool              `bun:"is_enabled" json:"isEnabled"`
}

// AuthConfig is an outbound or inbound authentication: a scheme, its params and, for the
// script scheme, a script (wire-integration §4).
type AuthConfig struct {
	Scheme string            `json:"scheme"`
	Params map[string]string `json:"params,omitempty"`
	Script string            `json:"script,omitempty"`
}

// EnvelopeConfig holds the outbound envelope scripts.
type EnvelopeConfig struct {
	Request  string `json:"request,omitempty"`
	Response string `json:"response,omitempty"`
}

// DataSourceConfig is a system's database (wire-integration §4); Password is a secret.
type DataSourceConfig struct {
	Kind        string `json:"kind"`
	Mode        string `json:"mode,omitempty"`
	Host        string `json:"host,omitempty"`
	Port        uint16 `json:"port,omitempty"`
	User        string `json:"user,omitempty"`
	Password    string `json:"password,omitempty"`
	Database    string `json:"database,omitempty"`
	Schema      string `json:"schema,omitempty"`
	Path        string `json:"path,omitempty"`
	SSLMode     string `json:"sslMode,omitempty"`
	SSLRootCert string `json:"sslRootCert,omitempty"`
}

// RetryPolicy is a system's HTTP retry policy.
type RetryPolicy struct {
	MaxAttempts      int `json:"maxAttempts"`
	InitialBackoffMs int `json:"initialBackoffMs,omitempty"`
	MaxBackoffMs     int `json:"maxBackoffMs,omitempty"`
}

// System is one external system (itg_system). Secrets of OutboundAuth, InboundAuth and
// DataSource are sealed at rest and masked in responses (§9).
type System struct {
	bun.BaseModel `bun:"table:itg_system,alias:itg_system"`
	crud.Audited
	Code             string            `bun:"code" json:"code"`
	Name             string            `bun:"name" json:"name"`
	BaseURL          string            `bun:"base_url" json:"baseUrl"`
	OutboundAuth     *AuthConfig       `bun:"outbound_auth,type:json,nullzero" json:"outboundAuth"`
	OutboundEnvelope *EnvelopeConfig   `bun:"outbound_envelope,type:json,nullzero" json:"outboundEnvelope"`
	InboundAuth      *AuthConfig       `bun:"inbound_auth,type:json,nullzero" json:"inboundAuth"`
	DataSource       *DataSourceConfig `bun:"data_source,type:json,nullzero" json:"dataSource"`
	Params           map[string]string `bun:"params,type:json,nullzero" json:"params"`
	TimeoutMs        int               `bun:"timeout_ms" json:"timeoutMs"`
	Retry            *RetryPolicy      `bun:"retry,type:json,nullzero" json:"retry"`
	IsEnabled        bool              `bun:"is_enabled" json:"isEnabled"`
}

// Adapter binds a system to a contract in one direction with a script (itg_adapter).
type Adapter struct {
	bun.BaseModel `bun:"table:itg_adapter,alias:itg_adapter"`
	crud.Audited
	SystemID   string `bun:"system_id" json:"systemId"`
	ContractID string `bun:"contract_id" json:"contractId"`
	Direction  string `bun:"direction" json:"direction"`
	Script     string `bun:"script" json:"script"`
	TimeoutMs  int    `bun:"timeout_ms" json:"timeoutMs"`
	IsEnabled  bool   `bun:"is_enabled" json:"isEnabled"`
}

// Route maps a route key and a contract ("" = every contract) to a system (itg_route).
type Route struct {
	bun.BaseModel `bun:"table:itg_route,alias:itg_route"`
	crud.Audited
	RouteKey   string `bun:"route_key" json:"routeKey"`
	ContractID string `bun:"contract_id" json:"contractId"`
	SystemID   string `bun:"system_id" json:"systemId"`
	IsEnabled  bool   `bun:"is_enabled" json:"isEnabled"`
}

// CodeMapEntry is one canonical ↔ external value pair with aliases; values are JSON strings,
// numbers or booleans.
type CodeMapEntry struct {
	Canonical        json.RawMessage   `json:"canonical"`
	External         json.RawMessage   `json:"external"`
	CanonicalAliases []json.RawMessage `json:"canonicalAliases,omitempty"`
	ExternalAliases  []json.RawMessage `json:"externalAliases,omitempty"`
}

// CodeMap translates one code set of one system (itg_code_map).
type CodeMap struct {
	bun.BaseModel `bun:"table:itg_code_map,alias:itg_code_map"`
	crud.Audited
	SystemID          string          `bun:"system_id" json:"systemId"`
	CodeSet           string          `bun:"code_set" json:"codeSet"`
	Name              string          `bun:"name" json:"name"`
	Entries           []CodeMapEntry  `bun:"entries,type:json,nullzero" json:"entries"`
	OnUnmapped        string          `bun:"on_unmapped" json:"onUnmapped"`
	FallbackCanonical json.RawMessage `bun:"fallback_canonical,type:json,nullzero" json:"fallbackCanonical,omitempty"`
	FallbackExternal  json.RawMessage `bun:"fallback_external,type:json,nullzero" json:"fallbackExternal,omitempty"`
	IsEnabled         bool            `bun:"is_enabled" json:"isEnabled"`
}

// InvocationLog is one recorded invocation or delivery (itg_invocation_log, §10).
type InvocationLog struct {
	bun.BaseModel `bun:"table:itg_invocation_log,alias:itg_invocation_log"`
	ID            string          `bun:"id,pk" json:"id"`
	CreatedAt     crud.Time       `bun:"created_at" json:"createdAt"`
	CreatedBy     string          `bun:"created_by" json:"createdBy"`
	SystemCode    string          `bun:"system_code" json:"systemCode"`
	ContractCode  string          `bun:"contract_code" json:"contractCode"`
	Direction     string          `bun:"direction" json:"direction"`
	FailureKind   string          `bun:"failure_kind" json:"failureKind"`
	DurationMs    int64           `bun:"duration_ms" json:"durationMs"`
	Input         json.RawMessage `bun:"input,type:json,nullzero" json:"input"`
	Output        json.RawMessage `bun:"output,type:json,nullzero" json:"output"`
	HTTPTrace     json.RawMessage `bun:"http_trace,type:json,nullzero" json:"httpTrace"`
	Error         *string         `bun:"error" json:"error"`
	RequestID     string          `bun:"request_id" json:"requestId"`
}

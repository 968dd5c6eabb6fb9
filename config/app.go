package config

// App is the svc.app section (spec §8.3).
type App struct {
	// Name is svc.app.name (default "svc-app"): the JWT audience and the push-relay namespace.
	Name string `toml:"name"`
	// Port is svc.app.port: the HTTP port. Required, no default.
	Port uint16 `toml:"port"`
	// BodyLimit is svc.app.body_limit (default 32mib): the largest request body accepted.
	BodyLimit Size `toml:"body_limit"`
	// TrustedProxies is svc.app.trusted_proxies: IPs or CIDRs whose X-Forwarded-For is believed.
	// Empty means forwarded headers are ignored and the peer address is the client IP.
	TrustedProxies []string `toml:"trusted_proxies"`
}

// CORS is the svc.cors section (spec §8.3).
type CORS struct {
	// Enabled is svc.cors.enabled (default false).
	Enabled bool `toml:"enabled"`
	// AllowOrigins is svc.cors.allow_origins: the origins allowed ("*" for any).
	AllowOrigins []string `toml:"allow_origins"`
}

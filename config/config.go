// Package config holds the typed configuration of every key of the spec (§5.3, §5.4, §6.1,
// §8.3): one struct per section, defaults applied once at load, Validate returning the spec's
// named startup errors.
package config

// Config is the whole svc configuration (the [svc] table of application.toml).
type Config struct {
	App         App                   `toml:"app"`
	DataSources map[string]DataSource `toml:"data_sources"`
	CORS        CORS                  `toml:"cors"`
	KVStore     KVStore               `toml:"kvstore"`
}

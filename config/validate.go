package config

import "errors"

// Validate returns every startup error of the configuration at once (errors.Join), each wrapping
// one of the package's sentinels and naming the key: spec §7's named errors plus svc's own
// (ErrMissingPort, ErrMissingPrimaryDataSource, ErrInvalidDataSource, ...). It reads effective
// values, so it gives the same verdict on a loaded Config and on one built in code, and it
// includes the negative raw values that applyDefaults replaced at load. It returns nil when the
// service can start.
func (c *Config) Validate() error {
	errs := append([]error(nil), c.loadErrs...)
	for _, section := range [][]error{
		c.Log.validate(),
		c.I18n.validate(),
		c.App.validate(),
		validateDataSources(c.DataSources),
		c.KVStore.validate(),
		c.API.validate(),
		c.Security.validate(),
		c.Storage.validate(),
		c.Approval.validate(),
		c.Cron.Store.validate(),
		c.Integration.validate(),
		c.Push.validate(),
		c.MCP.validate(c.DataSources),
		c.Event.validate(c.KVStore.Enabled),
		c.validateAdmin(),
		c.Console.validate(),
		c.Backup.validate(),
	} {
		errs = append(errs, section...)
	}
	return errors.Join(errs...)
}

package integration

// bindSQL installs the scoped sql library when the system has a data source.
func (s *Service) bindSQL(r *run, sys *System) error {
	if sys.DataSource == nil {
		return nil
	}
	return &kindError{kind: KindConfig, err: detail(ErrInvalidDataSource, "the sql library is not available yet")}
}

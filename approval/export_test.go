package approval

// SetWritesAtOnce switches s's runs between batching their writes (off, the default) and
// executing each when queued (on): BenchmarkDecide's unbatched baseline.
func SetWritesAtOnce(s *Service, on bool) { s.writesAtOnce.Store(on) }

package storage

import "context"

// Stats are the storage gauges the metrics exporter reads at scrape time (issue #19).
type Stats struct {
	// ActiveClaims counts upload claims still pending and not expired, every owner together.
	ActiveClaims int64
	// DeleteQueueDepth counts rows of sys_storage_pending_delete (objects waiting for the
	// delete worker, in retry included).
	DeleteQueueDepth int64
}

// Stats counts the active claims and the delete queue with two COUNT queries.
func (s *Service) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	var err error
	st.ActiveClaims, err = s.db.NewSelect().Model((*claimRow)(nil)).
		Where("status = ?", StatusPending).Where("expires_at > ?", s.now()).Count(ctx)
	if err != nil {
		return Stats{}, err
	}
	st.DeleteQueueDepth, err = s.db.NewSelect().Model((*pendingDelete)(nil)).Count(ctx)
	if err != nil {
		return Stats{}, err
	}
	return st, nil
}

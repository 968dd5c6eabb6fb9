package approval

import (
	"context"
	"database/sql"
	"errors"
)

// publishedKey is a flow and its current version number.
type publishedKey struct {
	flowID  string
	version int
}

// publishedVersion is the id of f's published version (40003 when there is none). The answer
// is cached by flow id and current version number: publish_version sets the number together
// with the version's status in one transaction and a number never names another version, so
// a start that read the flow with number N would have found the same row. Entries are keyed by
// the number of the row found, so a flow read just before a publish cannot file the new
// version under the old number.
func (s *Service) publishedVersion(ctx context.Context, f *Flow) (string, error) {
	key := publishedKey{f.ID, f.CurrentVersion}
	if id, ok := s.published.Load(key); ok {
		return id.(string), nil
	}
	v := new(Version)
	if err := s.db.NewSelect().Model(v).Column("id", "version").Where("flow_id = ?", f.ID).
		Where("status = ?", VersionPublished).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return "", ErrNoPublishedVersion
		}
		return "", err
	}
	s.published.Store(publishedKey{f.ID, v.Version}, v.ID) // the number the row has, not the one f was read with
	return v.ID, nil
}

package security

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisKeyMargin is added to every Redis TTL: the stored times, checked against the injected
// clock, decide expiry; the TTL only reclaims memory afterwards.
const redisKeyMargin = time.Minute

// sessionFields are the hash fields of a session key, in the order the scripts return them.
var sessionFields = []string{"pid", "principal", "ip", "created", "seen", "expires", "max"}

// redisSessions keeps sessions in Redis (svc.kvstore.enabled): a hash per session under
// svc:session:<app>:s:<id> and a sorted set of the user's session ids by creation time under
// svc:session:<app>:u:<userId>. Login's limit check, eviction and insert run as one script, so
// max_concurrent holds exactly even when logins race on many nodes. Keys expire by TTL; there is
// nothing to purge. The scripts touch keys they compute, so the store needs a single Redis
// server (or a primary), not a cluster.
type redisSessions struct {
	client      *redis.Client
	prefix      string
	maxLifetime time.Duration
}

var _ sessionStore = (*redisSessions)(nil)

func newRedisSessions(client *redis.Client, appName string, maxLifetime time.Duration) *redisSessions {
	return &redisSessions{client: client, prefix: "svc:session:" + appName + ":", maxLifetime: maxLifetime}
}

func (r *redisSessions) sessionKey(id string) string { return r.prefix + "s:" + id }
func (r *redisSessions) userKey(id string) string    { return r.prefix + "u:" + id }

// createScript: KEYS session set of the user, new session key; ARGV session key prefix, max,
// reject (1/0), now, id, then the fields pid, principal, ip, created, expires, max, then the
// TTLs of the session and of the set and the oldest creation time that may still be live (all
// times in ms). It answers {0} when rejecting, else {1, evicted ids}.
var createScript = redis.NewScript(`
local zkey, skey, prefix = KEYS[1], KEYS[2], ARGV[1]
local limit = tonumber(ARGV[2])
local now = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', zkey, '-inf', '(' .. ARGV[14])
local evicted = {}
if limit > 0 then
  local live = {}
  for _, id in ipairs(redis.call('ZRANGE', zkey, 0, -1)) do
    local exp = tonumber(redis.call('HGET', prefix .. id, 'expires') or '0')
    if exp > now then
      live[#live + 1] = id
    else
      redis.call('ZREM', zkey, id)
    end
  end
  local over = #live - limit + 1
  if over > 0 then
    if ARGV[3] == '1' then return {0} end
    for i = 1, over do
      redis.call('DEL', prefix .. live[i])
      redis.call('ZREM', zkey, live[i])
      evicted[#evicted + 1] = live[i]
    end
  end
end
redis.call('HSET', skey, 'pid', ARGV[6], 'principal', ARGV[7], 'ip', ARGV[8], 'created', ARGV[9],
  'seen', ARGV[9], 'expires', ARGV[10], 'max', ARGV[11])
redis.call('PEXPIRE', skey, ARGV[12])
redis.call('ZADD', zkey, ARGV[9], ARGV[5])
redis.call('PEXPIRE', zkey, ARGV[13])
return {1, evicted}
`)

// touchScript moves expires forward only (never resurrecting a removed session). KEYS session;
// ARGV expires, seen, TTL (ms).
var touchScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], 'expires')
if not cur or tonumber(cur) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'expires', ARGV[1], 'seen', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// removeScript deletes a session and its entry in the user's set and returns its fields; of
// racing removals only the first gets them. KEYS session; ARGV user-set prefix, id.
var removeScript = redis.NewScript(`
local f = redis.call('HMGET', KEYS[1], 'pid', 'principal', 'ip', 'created', 'seen', 'expires', 'max')
if not f[1] then return false end
redis.call('DEL', KEYS[1])
redis.call('ZREM', ARGV[1] .. f[1], ARGV[2])
return f
`)

func (r *redisSessions) precision() time.Duration { return time.Millisecond }

func (r *redisSessions) create(ctx context.Context, s Session, limit sessionLimit, now time.Time) ([]Session, error) {
	row, err := newSessionRow(s)
	if err != nil {
		return nil, err
	}
	reject := "0"
	if limit.reject {
		reject = "1"
	}
	ttl := s.ExpiresAt.Sub(now) + redisKeyMargin
	res, err := createScript.Run(ctx, r.client, []string{r.userKey(s.UserID), r.sessionKey(s.ID)},
		r.prefix+"s:", limit.max, reject, ms(now), s.ID,
		s.UserID, row.Principal, s.ClientIP, ms(s.CreatedAt), ms(s.ExpiresAt), ms(s.MaxExpiresAt),
		ttl.Milliseconds(), (r.maxLifetime + redisKeyMargin).Milliseconds(), ms(now.Add(-r.maxLifetime))).Slice()
	if err != nil {
		return nil, fmt.Errorf("security: create session: %w", err)
	}
	if ok, _ := res[0].(int64); ok == 0 {
		return nil, ErrTooManyConcurrentSessions
	}
	var evicted []Session
	if len(res) > 1 {
		ids, _ := res[1].([]any)
		for _, id := range ids {
			if s, ok := id.(string); ok {
				evicted = append(evicted, Session{ID: s, UserID: row.PrincipalID})
			}
		}
	}
	return evicted, nil
}

func (r *redisSessions) get(ctx context.Context, id string) (*Session, error) {
	vals, err := r.client.HMGet(ctx, r.sessionKey(id), sessionFields...).Result()
	if err != nil {
		return nil, fmt.Errorf("security: load session: %w", err)
	}
	return parseRedisSession(id, vals)
}

func (r *redisSessions) touch(ctx context.Context, id string, seen, expires time.Time) error {
	ttl := expires.Sub(seen) + redisKeyMargin
	err := touchScript.Run(ctx, r.client, []string{r.sessionKey(id)}, ms(expires), ms(seen), ttl.Milliseconds()).Err()
	if err != nil {
		return fmt.Errorf("security: extend session: %w", err)
	}
	return nil
}

func (r *redisSessions) remove(ctx context.Context, id string, _ time.Time) (*Session, error) {
	vals, err := removeScript.Run(ctx, r.client, []string{r.sessionKey(id)}, r.prefix+"u:", id).Slice()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("security: revoke session: %w", err)
	}
	return parseRedisSession(id, vals)
}

func (r *redisSessions) list(ctx context.Context, userID string, now time.Time) ([]Session, error) {
	ids, err := r.client.ZRange(ctx, r.userKey(userID), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("security: list sessions: %w", err)
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	_, err = r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, r.sessionKey(id), sessionFields...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("security: list sessions: %w", err)
	}
	out := make([]Session, 0, len(ids))
	for i, cmd := range cmds {
		s, err := parseRedisSession(ids[i], cmd.Val())
		if err != nil || s == nil || !now.Before(s.ExpiresAt) {
			continue
		}
		out = append(out, *s)
	}
	return out, nil
}

func (r *redisSessions) purge(context.Context, time.Time) (int64, error) { return 0, nil }

// parseRedisSession reads the fields of sessionFields; a missing hash is nil, nil.
func parseRedisSession(id string, vals []any) (*Session, error) {
	if len(vals) != len(sessionFields) || vals[0] == nil {
		return nil, nil
	}
	str := func(i int) string { s, _ := vals[i].(string); return s }
	at := func(i int) time.Time {
		n, _ := strconv.ParseInt(str(i), 10, 64)
		return time.UnixMilli(n).UTC()
	}
	p, err := decodePrincipal(str(1), str(0))
	if err != nil {
		return nil, err
	}
	return &Session{ID: id, UserID: str(0), Principal: p, ClientIP: str(2), CreatedAt: at(3), LastSeenAt: at(4),
		ExpiresAt: at(5), MaxExpiresAt: at(6)}, nil
}

func ms(t time.Time) int64 { return t.UnixMilli() }

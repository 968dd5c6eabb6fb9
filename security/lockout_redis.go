package security

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
)

// RedisLockout is the LockoutStore shared by every node through the key-value store
// (svc.kvstore.enabled). Each key is a hash {count, last, until} in milliseconds of the caller's
// clock, updated atomically by a script; it expires once it can neither block nor count.
type RedisLockout struct {
	client *redis.Client
	prefix string
	rule   lockoutRule
}

var _ LockoutStore = (*RedisLockout)(nil)

// NewRedisLockout returns a Redis store applying cfg under keys svc:lockout:<app>:<key>.
func NewRedisLockout(client *redis.Client, appName string, cfg config.Lockout) *RedisLockout {
	return &RedisLockout{client: client, prefix: "svc:lockout:" + appName + ":", rule: newLockoutRule(cfg)}
}

// failScript mirrors lockoutRule.fail. ARGV: now, window, max, backoff (0/1), lock, base,
// backoffMax (all ms). It returns the block in ms (0 = none).
var failScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local maxf = tonumber(ARGV[3])
local count = tonumber(redis.call('HGET', KEYS[1], 'count') or '0')
local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '0')
local untilt = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if count > 0 and now - last > window then
  count = 0
  untilt = 0
end
count = count + 1
local delay = 0
if count >= maxf then
  if ARGV[4] == '1' then
    local shift = math.min(count - maxf, 40)
    delay = tonumber(ARGV[6]) * (2 ^ shift)
    if delay > tonumber(ARGV[7]) then delay = tonumber(ARGV[7]) end
  else
    delay = tonumber(ARGV[5])
  end
  untilt = now + delay
end
redis.call('HSET', KEYS[1], 'count', count, 'last', now, 'until', untilt)
local ttl = math.max(untilt - now, 0) + window + 60000
redis.call('PEXPIRE', KEYS[1], math.floor(ttl))
if untilt > now then return untilt - now end
return 0
`)

// Blocked implements LockoutStore.
func (r *RedisLockout) Blocked(ctx context.Context, key string, now time.Time) (time.Duration, error) {
	until, err := r.client.HGet(ctx, r.prefix+key, "until").Int64()
	if err == redis.Nil {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("security: lockout: %w", err)
	}
	if wait := until - now.UnixMilli(); wait > 0 {
		return time.Duration(wait) * time.Millisecond, nil
	}
	return 0, nil
}

// Fail implements LockoutStore.
func (r *RedisLockout) Fail(ctx context.Context, key string, now time.Time) (time.Duration, error) {
	backoff := "0"
	if r.rule.backoff {
		backoff = "1"
	}
	ms, err := failScript.Run(ctx, r.client, []string{r.prefix + key}, now.UnixMilli(), r.rule.window.Milliseconds(),
		r.rule.maxFailures, backoff, r.rule.lock.Milliseconds(), r.rule.base.Milliseconds(), r.rule.backoffMax.Milliseconds()).Int64()
	if err != nil {
		return 0, fmt.Errorf("security: lockout: %w", err)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Reset implements LockoutStore.
func (r *RedisLockout) Reset(ctx context.Context, key string) error {
	if err := r.client.Del(ctx, r.prefix+key).Err(); err != nil {
		return fmt.Errorf("security: lockout: %w", err)
	}
	return nil
}

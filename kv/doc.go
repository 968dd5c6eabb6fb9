// Package kv builds the key-value store client of svc.kvstore (spec §8.3): a go-redis client for
// Redis or a compatible server, shared by the modules that keep cross-node state there (event
// streams, the push relay, lockout and session state).
//
// # Configuration
//
// Open reads config.KVStore:
//
//   - enabled: false (the default) means no client at all. Open returns a nil client and a nil
//     error without touching the network, and consumers treat the nil client as "kvstore
//     disabled".
//   - network: tcp (default) or unix. Anything else fails with config.ErrInvalidKVStore.
//   - host and port: for tcp the address host:port, each falling back to 127.0.0.1 and 6379 when
//     zero (config applies the same defaults at load; the fallback keeps Open usable with a
//     hand-built struct). For unix, host is the socket path and port is ignored.
//   - user and password: the ACL user (empty means "default") and its password.
//   - database: the logical database number 0–255.
//
// # Startup
//
// Open pings the server within a bounded time (a shorter deadline on the caller's context wins)
// and closes the client when the ping fails. Error messages name the network and address and
// never contain the password.
//
// The client honours context deadlines on every command (ContextTimeoutEnabled), so a request's
// context bounds its Redis calls.
//
// # Nonces
//
// NonceStore remembers the nonces of signed requests so replays are refused: NewRedisNonces
// (SET NX with a TTL, shared by every node) when the kv store is enabled, NewMemoryNonces
// otherwise. The security module's trust-login gateway (svc:trust:<app>:nonce:) and the
// integration module's inbound signature scheme (svc:integration:<app>:nonce:) use it.
package kv

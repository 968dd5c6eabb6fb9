package integration

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/emmansun/gmsm/sm3"
	"github.com/google/uuid"
)

// installBaseline adds the bindings every surface has (wire-integration §8): console, crypto,
// cache, URL and URLSearchParams and the standard bundle (each evaluated on first use), and the
// size checks on the builtins that build large strings from small calls.
func (r *run) installBaseline(logAttrs []any) {
	r.lazyValue("console", func() goja.Value { return r.consoleLib(logAttrs) })
	r.lazyValue("crypto", func() goja.Value { return r.cryptoLib() })
	r.lazyValue("cache", func() goja.Value { return r.cacheLib() })
	r.lazyGlobals(urlPrelude, "URL", "URLSearchParams")
	for _, lib := range stdBundle {
		r.lazyGlobals(lib, lib.all[0])
	}
	r.limitStringBuilders()
}

// lazyValue defines the global name as built by make on first access (then a plain writable
// property), so runs pay only for the libraries their script touches.
func (r *run) lazyValue(name string, make func() goja.Value) {
	global := r.vm.GlobalObject()
	getter := r.vm.ToValue(func(goja.FunctionCall) goja.Value {
		v := make()
		global.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		return v
	})
	global.DefineAccessorProperty(name, getter, nil, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// consoleLib is console: log, info, warn, error to the server log.
func (r *run) consoleLib(logAttrs []any) goja.Value {
	console := r.vm.NewObject()
	logAt := func(level slog.Level) func(goja.FunctionCall) goja.Value {
		return func(c goja.FunctionCall) goja.Value {
			parts := make([]string, len(c.Arguments))
			for i, a := range c.Arguments {
				parts[i] = consoleText(r, a)
			}
			r.e.log.Log(r.ctx, level, "integration script: "+strings.Join(parts, " "), logAttrs...)
			return goja.Undefined()
		}
	}
	console.Set("log", logAt(slog.LevelInfo))
	console.Set("info", logAt(slog.LevelInfo))
	console.Set("warn", logAt(slog.LevelWarn))
	console.Set("error", logAt(slog.LevelError))
	return console
}

// consoleText is one console argument as logged: strings as they are, errors by message,
// anything else as JSON.
func consoleText(r *run, v goja.Value) string {
	if goja.IsUndefined(v) {
		return "undefined"
	}
	if o, ok := v.(*goja.Object); ok {
		if o.ClassName() == "Error" {
			return o.Get("message").String()
		}
		if b, err := r.toJSON(v); err == nil {
			return string(b)
		}
	}
	return v.String()
}

// limitStringBuilders refuses repeat/padStart/padEnd results over MaxStringBytes before they
// are allocated (the first memory layer; the heap watchdog is the second).
func (r *run) limitStringBuilders() {
	proto := r.vm.Get("String").ToObject(r.vm).Get("prototype").ToObject(r.vm)
	max := int64(r.e.limits.MaxStringBytes)
	wrap := func(name string, size func(c goja.FunctionCall) int64) {
		orig, _ := goja.AssertFunction(proto.Get(name))
		proto.Set(name, func(c goja.FunctionCall) goja.Value {
			if size(c) > max {
				r.vm.Interrupt(errMemoryLimit)
				panic(r.vm.NewTypeError("memory limit exceeded"))
			}
			v, err := orig(c.This, c.Arguments...)
			if err != nil {
				r.rethrow(err)
			}
			return v
		})
	}
	wrap("repeat", func(c goja.FunctionCall) int64 {
		return int64(len(c.This.String())) * c.Argument(0).ToInteger()
	})
	pad := func(c goja.FunctionCall) int64 { return c.Argument(0).ToInteger() * 2 }
	wrap("padStart", pad)
	wrap("padEnd", pad)
}

// lazyGlobals defines names as globals computed on first access by running the script src,
// which evaluates to a function of the host helpers returning an object holding the names, or,
// without helpers, to the value of its one global. Runs that never touch them pay nothing.
func (r *run) lazyGlobals(src *lazySource, names ...string) {
	var once sync.Once
	var defs *goja.Object
	load := func() {
		once.Do(func() {
			p, err := src.program()
			if err != nil {
				r.rethrow(err)
			}
			v, err := r.vm.RunProgram(p)
			if err != nil {
				r.rethrow(err)
			}
			if src.helpers == nil { // a library: the program's value is the one global
				defs = r.vm.NewObject()
				defs.Set(src.all[0], v)
			} else {
				fn, _ := goja.AssertFunction(v)
				out, err := fn(goja.Undefined(), r.vm.ToValue(src.helpers(r)))
				if err != nil {
					r.rethrow(err)
				}
				defs = out.ToObject(r.vm)
			}
			for _, n := range src.all {
				r.vm.GlobalObject().DefineDataProperty(n, defs.Get(n), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
			}
		})
	}
	for _, n := range names {
		name := n
		getter := r.vm.ToValue(func(goja.FunctionCall) goja.Value {
			load()
			if defs == nil { // its first load failed
				panic(r.vm.NewTypeError(name + " is not available"))
			}
			return defs.Get(name)
		})
		r.vm.GlobalObject().DefineAccessorProperty(name, getter, nil, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
}

// lazySource is a prelude compiled once per process.
type lazySource struct {
	name    string
	src     func() string
	all     []string
	helpers func(r *run) map[string]any
	once    sync.Once
	prg     *goja.Program
	err     error
}

func (s *lazySource) program() (*goja.Program, error) {
	s.once.Do(func() { s.prg, s.err = goja.Compile(s.name, s.src(), true) })
	return s.prg, s.err
}

//go:embed jslib/url.js
var urlJS string

// urlPrelude defines URL and URLSearchParams over Go's URL parser.
var urlPrelude = &lazySource{name: "url.js", src: func() string { return urlJS }, all: []string{"URL", "URLSearchParams"},
	helpers: func(r *run) map[string]any {
		return map[string]any{"parse": func(raw string, base goja.Value) goja.Value {
			u, err := url.Parse(raw)
			if err == nil && base != nil && !goja.IsUndefined(base) {
				var b *url.URL
				if b, err = url.Parse(base.String()); err == nil {
					if !b.IsAbs() {
						err = errors.New("base is not absolute")
					} else {
						u = b.ResolveReference(u)
					}
				}
			}
			if err != nil || !u.IsAbs() {
				return goja.Null()
			}
			pass, _ := u.User.Password()
			path := u.EscapedPath()
			if path == "" && u.Host != "" {
				path = "/"
			}
			search := ""
			if u.RawQuery != "" {
				search = "?" + u.RawQuery
			}
			hash := ""
			if u.Fragment != "" {
				hash = "#" + u.EscapedFragment()
			}
			return r.vm.ToValue(map[string]any{"protocol": strings.ToLower(u.Scheme) + ":", "username": u.User.Username(),
				"password": pass, "hostname": strings.ToLower(u.Hostname()), "port": u.Port(), "pathname": path,
				"search": search, "hash": hash})
		}}
	}}

// cryptoLib is crypto: digests (lower hex of the UTF-8 input), hmac, base64, hex and uuid.
func (r *run) cryptoLib() goja.Value {
	o := r.vm.NewObject()
	algs := map[string]func() hash.Hash{"md5": md5.New, "sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New, "sm3": sm3.New}
	for name, h := range algs {
		o.Set(name, func(data string) string {
			d := h()
			d.Write([]byte(data))
			return hex.EncodeToString(d.Sum(nil))
		})
	}
	o.Set("hmac", func(alg, key, data string) string {
		h, ok := algs[strings.ToLower(alg)]
		if !ok {
			panic(r.vm.NewTypeError("crypto.hmac: unknown algorithm " + alg))
		}
		m := hmac.New(h, []byte(key))
		m.Write([]byte(data))
		return hex.EncodeToString(m.Sum(nil))
	})
	o.Set("base64Encode", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) })
	o.Set("base64Decode", func(s string) string {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			if b, err = base64.RawStdEncoding.DecodeString(s); err != nil {
				panic(r.vm.NewTypeError("crypto.base64Decode: " + err.Error()))
			}
		}
		return string(b)
	})
	o.Set("hexEncode", func(s string) string { return hex.EncodeToString([]byte(s)) })
	o.Set("hexDecode", func(s string) string {
		b, err := hex.DecodeString(s)
		if err != nil {
			panic(r.vm.NewTypeError("crypto.hexDecode: " + err.Error()))
		}
		return string(b)
	})
	o.Set("uuid", func() string { return uuid.NewString() })
	return o
}

// scriptCacheMax bounds the cache binding (entries) and one value's JSON size.
const (
	scriptCacheMax      = 10000
	scriptCacheMaxValue = 1 << 20
)

// scriptCache backs the cache binding: one in-process map shared by every run, keys prefixed
// "js:", values stored as JSON so no script object outlives its runtime.
type scriptCache struct {
	clock func() time.Time
	mu    sync.Mutex
	items map[string]cacheItem
}

type cacheItem struct {
	value   string
	expires time.Time // zero: never
}

func newScriptCache(clock func() time.Time) *scriptCache {
	return &scriptCache{clock: clock, items: map[string]cacheItem{}}
}

func (c *scriptCache) get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items["js:"+key]
	if ok && !it.expires.IsZero() && !c.clock().Before(it.expires) {
		delete(c.items, "js:"+key)
		return "", false
	}
	return it.value, ok
}

func (c *scriptCache) set(key, value string, ttl time.Duration) error {
	if len(value) > scriptCacheMaxValue {
		return fmt.Errorf("cache.set: value over %d bytes", scriptCacheMaxValue)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	if len(c.items) >= scriptCacheMax {
		for k, it := range c.items {
			if !it.expires.IsZero() && !now.Before(it.expires) {
				delete(c.items, k)
			}
		}
		if len(c.items) >= scriptCacheMax {
			return fmt.Errorf("cache.set: the cache holds %d entries", scriptCacheMax)
		}
	}
	it := cacheItem{value: value}
	if ttl > 0 {
		it.expires = now.Add(ttl)
	}
	c.items["js:"+key] = it
	return nil
}

func (c *scriptCache) delete(key string) {
	c.mu.Lock()
	delete(c.items, "js:"+key)
	c.mu.Unlock()
}

// cacheLib is cache: get(key) (undefined when absent), set(key, value, ttlMs?), has, delete.
func (r *run) cacheLib() goja.Value {
	c := r.e.cache
	o := r.vm.NewObject()
	o.Set("get", func(key string) goja.Value {
		v, ok := c.get(key)
		if !ok {
			return goja.Undefined()
		}
		return r.fromJSON([]byte(v))
	})
	o.Set("has", func(key string) bool { _, ok := c.get(key); return ok })
	o.Set("delete", func(key string) { c.delete(key) })
	o.Set("set", func(key string, v goja.Value, ttl goja.Value) {
		raw, err := r.toJSON(v)
		if err == nil && !json.Valid(raw) {
			err = errors.New("cache.set: value is not JSON")
		}
		if err == nil {
			var ms int64
			if ttl != nil && !goja.IsUndefined(ttl) && !goja.IsNull(ttl) {
				ms = ttl.ToInteger()
			}
			err = c.set(key, string(raw), time.Duration(ms)*time.Millisecond)
		}
		if err != nil {
			panic(r.vm.NewTypeError(err.Error()))
		}
	})
	return o
}

// stdFiles is the standard bundle generated by integration/jsbundle/gen.sh.
//
//go:embed jslib/std/*.js
var stdFiles embed.FS

// stdBundle are the standard bundle's globals (wire-integration §8), one compiled program per
// library, each evaluated in a run only when the script first reads the global.
var stdBundle = func() []*lazySource {
	var out []*lazySource
	for global, file := range map[string]string{"dayjs": "dayjs", "BigNumber": "bignumber", "fxp": "fxp", "radashi": "radashi", "z": "zod"} {
		out = append(out, &lazySource{name: file + ".js", all: []string{global}, src: func() string {
			b, _ := stdFiles.ReadFile("jslib/std/" + file + ".js")
			return string(b)
		}})
	}
	return out
}()

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
	"errors"
	"hash"
	"log/slog"
	"math"
	"net/url"
	"strings"
	"sync"

	"github.com/dop251/goja"
	"github.com/emmansun/gmsm/sm3"
	"github.com/svc-framework/svc/rpc"
)

// installLibraries adds, in a worker's runtime, the baseline bindings that need no host
// (wire-integration §8): crypto, URL and URLSearchParams and the standard bundle, each evaluated
// on first use. console and cache are host bindings (hostrun.go).
func (r *run) installLibraries() {
	r.lazyValue("crypto", func() goja.Value { return r.cryptoLib() })
	r.lazyGlobals(urlPrelude, "URL", "URLSearchParams")
	for _, lib := range stdBundle {
		r.lazyGlobals(lib, lib.all[0])
	}
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

// consoleLib is console: log, info, warn, error to the server log, masked as the invocation
// log is (issue #31 item 11) and, over the whole line, by the presence of a secret in any form
// that keeps its letters and digits in order (masker.line, issue #42 item 7): a script may
// print its system's credentials, which the server log must not keep.
func (r *run) consoleLib(logAttrs []any) goja.Value {
	console := r.vm.NewObject()
	logAt := func(level slog.Level) func(goja.FunctionCall) goja.Value {
		return func(c goja.FunctionCall) goja.Value {
			m := r.mask
			if m == nil {
				m = newMasker(nil, math.MaxInt, nil)
			}
			parts := make([]string, len(c.Arguments))
			for i, a := range c.Arguments {
				parts[i] = m.body(consoleText(r, a))
			}
			r.e.log.Log(r.ctx, level, "integration script: "+m.line(strings.Join(parts, " ")), logAttrs...)
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
	o.Set("uuid", func() string { return rpc.NewID() })
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

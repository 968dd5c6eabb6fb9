// URL and URLSearchParams for integration scripts (WHATWG shapes over Go's URL parser).
// Evaluates to a function of the host helpers {parse} returning {URL, URLSearchParams}.
(function (host) {
  "use strict";
  function enc(s) {
    return encodeURIComponent(s).replace(/%20/g, "+").replace(/[!'()~]/g, function (c) {
      return "%" + c.charCodeAt(0).toString(16).toUpperCase();
    });
  }
  function dec(s) {
    try { return decodeURIComponent(s.replace(/\+/g, " ")); } catch (e) { return s; }
  }
  class URLSearchParams {
    constructor(init) {
      this._list = [];
      this._url = null;
      if (init === undefined || init === null) return;
      if (init instanceof URLSearchParams) {
        this._list = init._list.map(function (p) { return [p[0], p[1]]; });
      } else if (typeof init === "object") {
        const pairs = typeof init[Symbol.iterator] === "function" ? Array.from(init) : Object.keys(init).map(function (k) { return [k, init[k]]; });
        for (const p of pairs) {
          if (!p || p.length !== 2) throw new TypeError("URLSearchParams: each pair needs two items");
          this._list.push([String(p[0]), String(p[1])]);
        }
      } else {
        this._parse(String(init));
      }
    }
    _parse(s) {
      this._list = [];
      if (s.charAt(0) === "?") s = s.slice(1);
      for (const part of s.split("&")) {
        if (part === "") continue;
        const i = part.indexOf("=");
        this._list.push(i < 0 ? [dec(part), ""] : [dec(part.slice(0, i)), dec(part.slice(i + 1))]);
      }
    }
    _update() { if (this._url) { const s = this.toString(); this._url._search = s === "" ? "" : "?" + s; } }
    get size() { return this._list.length; }
    append(k, v) { this._list.push([String(k), String(v)]); this._update(); }
    delete(k) { k = String(k); this._list = this._list.filter(function (p) { return p[0] !== k; }); this._update(); }
    get(k) { k = String(k); for (const p of this._list) if (p[0] === k) return p[1]; return null; }
    getAll(k) { k = String(k); return this._list.filter(function (p) { return p[0] === k; }).map(function (p) { return p[1]; }); }
    has(k) { k = String(k); return this._list.some(function (p) { return p[0] === k; }); }
    set(k, v) {
      k = String(k); v = String(v);
      const i = this._list.findIndex(function (p) { return p[0] === k; });
      if (i < 0) { this._list.push([k, v]); } else {
        this._list[i][1] = v;
        this._list = this._list.filter(function (p, j) { return j <= i || p[0] !== k; });
      }
      this._update();
    }
    sort() { this._list.sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0; }); this._update(); }
    forEach(fn, self) { for (const p of this._list) fn.call(self, p[1], p[0], this); }
    keys() { return this._list.map(function (p) { return p[0]; })[Symbol.iterator](); }
    values() { return this._list.map(function (p) { return p[1]; })[Symbol.iterator](); }
    entries() { return this._list.map(function (p) { return [p[0], p[1]]; })[Symbol.iterator](); }
    [Symbol.iterator]() { return this.entries(); }
    toString() { return this._list.map(function (p) { return enc(p[0]) + "=" + enc(p[1]); }).join("&"); }
  }
  class URL {
    constructor(url, base) {
      const p = host.parse(String(url), base === undefined ? undefined : String(base));
      if (p === null) throw new TypeError("Invalid URL: " + url);
      this._assign(p);
    }
    _assign(p) {
      this._protocol = p.protocol; this._username = p.username; this._password = p.password;
      this._hostname = p.hostname; this._port = p.port; this._pathname = p.pathname;
      this._search = p.search; this._hash = p.hash; this._params = null;
    }
    get protocol() { return this._protocol; }
    get username() { return this._username; }
    get password() { return this._password; }
    get hostname() { return this._hostname; }
    set hostname(v) { this._hostname = String(v); }
    get port() { return this._port; }
    set port(v) { this._port = String(v); }
    get host() { return this._hostname + (this._port ? ":" + this._port : ""); }
    get origin() { return this._protocol + "//" + this.host; }
    get pathname() { return this._pathname; }
    set pathname(v) { v = String(v); this._pathname = v.charAt(0) === "/" ? v : "/" + v; }
    get search() { return this._search === "?" ? "" : this._search; }
    set search(v) { v = String(v); this._search = v === "" ? "" : (v.charAt(0) === "?" ? v : "?" + v); if (this._params) this._params._parse(this._search); }
    get hash() { return this._hash; }
    set hash(v) { v = String(v); this._hash = v === "" ? "" : (v.charAt(0) === "#" ? v : "#" + v); }
    get searchParams() {
      if (!this._params) { this._params = new URLSearchParams(this._search); this._params._url = this; }
      return this._params;
    }
    get href() {
      const auth = this._username ? this._username + (this._password ? ":" + this._password : "") + "@" : "";
      return this._protocol + "//" + auth + this.host + this._pathname + this.search + this._hash;
    }
    set href(v) { const p = host.parse(String(v)); if (p === null) throw new TypeError("Invalid URL: " + v); this._assign(p); }
    toString() { return this.href; }
    toJSON() { return this.href; }
  }
  return { URL: URL, URLSearchParams: URLSearchParams };
})

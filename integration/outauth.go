package integration

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Signature headers of the framework HMAC scheme (wire-integration §6, §7).
const (
	headerTimestamp = "x-timestamp"
	headerNonce     = "x-nonce"
	headerSignature = "x-signature"
)

// signaturePayload is the string the framework signature covers: app_id, method, nonce, path
// and timestamp, sorted by key and joined with "&".
func signaturePayload(appID, method, nonce, path string, ts int64) string {
	return "app_id=" + appID + "&method=" + method + "&nonce=" + nonce + "&path=" + path +
		"&timestamp=" + strconv.FormatInt(ts, 10)
}

// signature is the lower-hex HMAC-SHA256 of payload under a hex secret.
func signature(secretHex, payload string) (string, error) {
	key, err := hex.DecodeString(secretHex)
	if err != nil || len(key) == 0 {
		return "", errors.New("signature: secret must be hex")
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(payload))
	return hex.EncodeToString(m.Sum(nil)), nil
}

// outboundAuth applies a system's outbound authentication to one request (after the request
// envelope). An error is an auth-hook failure (kind config).
type outboundAuth func(r *run, req *http.Request, body []byte) error

// openAuth decrypts the params of an authentication; failure is a configuration fault (2617).
func (s *Service) openAuth(a *AuthConfig) (map[string]string, error) {
	params := make(map[string]string, len(a.Params))
	for k, v := range a.Params {
		plain, err := s.secrets.Open(v)
		if err != nil {
			return nil, &kindError{kind: KindConfig, err: detail(ErrInvalidAuthParams, a.Scheme+": "+k+": "+err.Error())}
		}
		params[k] = plain
	}
	return params, nil
}

// outboundAuthOf builds the outbound authentication of a system: nil for none; an unknown
// scheme is 2614 and undecryptable params 2617, both kind config. A host scheme
// (Options.OutboundSchemes) wins over a built-in of the same name.
func (s *Service) outboundAuthOf(a *AuthConfig) (outboundAuth, error) {
	if a == nil || a.Scheme == "" || a.Scheme == "none" {
		return nil, nil
	}
	if _, ok := s.outAuth.sensitive[a.Scheme]; !ok {
		return nil, &kindError{kind: KindConfig, err: ErrUnknownAuthScheme.WithArgs("scheme", a.Scheme)}
	}
	p, err := s.openAuth(a)
	if err != nil {
		return nil, err
	}
	if custom := s.outAuth.outbound[a.Scheme]; custom != nil {
		apply, err := custom.Apply(p)
		if err != nil {
			return nil, &kindError{kind: KindConfig, err: detail(ErrInvalidAuthParams, a.Scheme+": "+err.Error())}
		}
		return func(_ *run, req *http.Request, _ []byte) error { return apply(req) }, nil
	}
	switch a.Scheme {
	case "http_basic":
		return func(_ *run, req *http.Request, _ []byte) error {
			req.SetBasicAuth(p["username"], p["password"])
			return nil
		}, nil
	case "bearer":
		return func(_ *run, req *http.Request, _ []byte) error {
			req.Header.Set("Authorization", "Bearer "+p["token"])
			return nil
		}, nil
	case "header":
		return func(_ *run, req *http.Request, _ []byte) error {
			for k, v := range p {
				req.Header.Set(k, v)
			}
			return nil
		}, nil
	case "query":
		return func(_ *run, req *http.Request, _ []byte) error {
			q := req.URL.Query()
			for k, v := range p {
				q.Set(k, v)
			}
			req.URL.RawQuery = q.Encode()
			return nil
		}, nil
	case "signature":
		return s.signRequests(p["appId"], p["secret"]), nil
	case "script":
		return s.scriptAuth(a.Script, p), nil
	}
	return nil, nil
}

// signRequests sets x-timestamp, x-nonce and x-signature over (appId, method, URL path): the
// counterpart of the inbound signature scheme.
func (s *Service) signRequests(appID, secretHex string) outboundAuth {
	return func(_ *run, req *http.Request, _ []byte) error {
		var n [16]byte
		rand.Read(n[:])
		nonce := hex.EncodeToString(n[:])
		ts := s.clock().Unix()
		sig, err := signature(secretHex, signaturePayload(appID, req.Method, nonce, req.URL.Path, ts))
		if err != nil {
			return err
		}
		req.Header.Set(headerTimestamp, strconv.FormatInt(ts, 10))
		req.Header.Set(headerNonce, nonce)
		req.Header.Set(headerSignature, sig)
		return nil
	}
}

// scriptAuth runs the auth script per request in a zero-IO runtime with request {method, url,
// path, query, headers (lower-cased), body} and params; the returned object's properties are
// headers to add (null: none; anything else is an error).
func (s *Service) scriptAuth(script string, params map[string]string) outboundAuth {
	return func(r *run, req *http.Request, body []byte) error {
		q := map[string]string{}
		for k, v := range req.URL.Query() {
			q[k] = v[0]
		}
		in, _ := json.Marshal(map[string]any{"method": req.Method, "url": req.URL.String(), "path": req.URL.Path,
			"query": q, "headers": flatHeaders(req.Header), "body": string(body)})
		pj, _ := json.Marshal(params)
		out, err := s.engine.runBody(r.ctx, "outbound-auth.js", script, func(ar *run) error {
			ar.mask = r.mask // the adapter's run: the system's secrets, these params among them
			ar.setData("request", in, nil)
			ar.setData("params", pj, nil)
			return nil
		})
		if err != nil {
			return fmt.Errorf("script: %s", scriptMessage(err))
		}
		var headers map[string]any
		if err := json.Unmarshal(out, &headers); err != nil {
			return errors.New("script: the auth script must return an object of headers or null")
		}
		for k, v := range headers {
			switch t := v.(type) {
			case string:
				req.Header.Set(k, t)
			case nil:
			default:
				b, _ := json.Marshal(t)
				req.Header.Set(k, strings.Trim(string(b), `"`))
			}
		}
		return nil
	}
}

// signatureTolerance is how far a signed request's timestamp may be from the server clock;
// used nonces are remembered for twice that plus a minute.
const (
	signatureTolerance = 5 * time.Minute
	signatureNonceTTL  = 2*signatureTolerance + time.Minute
)

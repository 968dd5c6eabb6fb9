package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-framework/svc/internal/jsontop"
)

// The fast path of tools/call (issue #18's cost target). In stateless mode the SDK builds a
// session, a JSON-RPC connection with its goroutines and a stream for every POST and decodes the
// message about nine times, each decode allocating a fresh 32 KiB buffer: a tools/call of an
// /api operation cost ~20× the same call through /api. The endpoint's hot request — one
// JSON-RPC request "tools/call" of an operation tool or of database_query — is answered here
// instead, with the bytes the SDK would write (TestFastCallMatchesSDK compares both, byte for
// byte, for every accepted form). The handler is the same sdk.ToolHandler the SDK server calls.
// A result of text contents is escaped into the connection in pieces (appendTexts): the SDK
// holds several whole copies of its encoding, which for database_query's answer of up to
// svc.mcp.query.max_bytes weighed 10–30 times the answer (issue #42). The SDK still serves
// every other request, and every request this code is not certain to answer exactly as the SDK
// would: batches, notifications, other methods, host tools, _meta other than
// the SEP-2575 triple (progress tokens, log levels), unknown members, escaped strings,
// non-integer ids, unknown protocol versions, the SDK's own error cases (method, media types,
// DNS-rebinding protection, body size, header mismatches) and Mcp-* headers the fast path does
// not check.

// newProtocolVersion is the first protocol version with per-request metadata and standard
// headers (SEP-2575): a call carries the _meta triple (protocol version, client capabilities,
// optionally client info) and the Mcp-Method and Mcp-Name headers, and its result carries the
// server's identity in _meta and resultType "complete".
const newProtocolVersion = "2026-07-28"

// metaServerInfo is the _meta key of the server identity in a result (SEP-2575).
const metaServerInfo = "io.modelcontextprotocol/serverInfo"

// fastVersions are the MCP-Protocol-Version header values the fast path answers: those the SDK
// supports up to newProtocolVersion (newer ones may change the exchange), and no header (the
// SDK then assumes 2025-03-26).
func fastVersions() []string {
	return slices.DeleteFunc(sdk.SupportedProtocolVersions(), func(v string) bool { return v > newProtocolVersion })
}

// serveFast answers r when it is one tools/call of an operation tool that the fast path answers
// exactly as the SDK would, and reports whether it did; otherwise r, its body intact, is the
// SDK's. authenticate calls it with the call's token info (nil for the anonymous user), which
// the SDK path attaches through auth.RequireBearerToken.
func (s *Service) serveFast(w http.ResponseWriter, r *http.Request, info *auth.TokenInfo) bool {
	version, ok := fastEligible(r, s.versions)
	if !ok || s.noFastPath.Load() {
		return false
	}
	body, whole := readBody(r)
	if !whole {
		return false
	}
	call, ok := parseToolCall(body)
	if ok {
		ok = call.matches(r.Header, version, &s.metaSeen)
	}
	var handler sdk.ToolHandler
	if ok {
		s.mu.RLock()
		handler, ok = s.fast[call.name]
		s.mu.RUnlock()
	}
	if !ok {
		r.Body = io.NopCloser(bytes.NewReader(body))
		return false
	}
	s.serveToolCall(w, r, info, call, handler, version >= newProtocolVersion)
	return true
}

// serveToolCall runs one operation tool and writes its JSON-RPC response as the SDK's stateless
// handler does: one server-sent event "message" with no id (no event store); in the new
// protocol the result carries the server identity and resultType "complete". The handler's
// context keeps the request's values but not its cancellation, as on the SDK path (which
// propagates cancellation only when StreamableHTTPOptions.PropagateRequestCancellation is set).
func (s *Service) serveToolCall(w http.ResponseWriter, r *http.Request, info *auth.TokenInfo, call toolCall, handler sdk.ToolHandler, newProtocol bool) {
	s.fastCalls.Add(1)
	req := &sdk.CallToolRequest{
		Params: &sdk.CallToolParamsRaw{Name: call.name, Arguments: call.arguments},
		Extra:  &sdk.RequestExtra{TokenInfo: info, Header: r.Header},
	}
	ctx := withWriter(context.WithoutCancel(r.Context()), w)
	res, err := handler(ctx, req)
	if err != nil || res == nil { // operation handlers answer tool errors: a bug
		s.log.Error("mcp: tools/call fast path", "tool", call.name, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	b := make([]byte, 0, 256)
	b = append(b, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"...)
	b = append(b, call.id...)
	b = append(b, ",\"result\":"...)
	h := w.Header()
	if texts, ok := textContents(res); ok {
		setEventHeaders(h)
		if b, err = s.appendTexts(w, b, texts, res.IsError, newProtocol); err != nil {
			return // the connection failed or passed the call's write deadline
		}
	} else if b, err = s.appendResult(b, res, newProtocol); err != nil {
		s.log.Error("mcp: tools/call fast path", "tool", call.name, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	b = append(b, "}\n\n"...)
	setEventHeaders(h)
	_, _ = w.Write(b)
	_ = http.NewResponseController(w).Flush()
}

// setEventHeaders sets the headers of the SDK's server-sent event answer.
func setEventHeaders(h http.Header) {
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
}

// streamFlush is how many encoded bytes the fast path collects before it writes them to the
// connection.
const streamFlush = 32 << 10

// streamChunk is how many bytes of a text are escaped at a time (at most six times as many
// encoded).
const streamChunk = 4 << 10

// appendTexts appends a result of text contents, as the SDK encodes it, to b; with w set, it
// writes b to w whenever it holds streamFlush bytes and returns the rest. A large text —
// database_query's answer, up to svc.mcp.query.max_bytes — is thus escaped into the connection
// piece by piece, where the SDK builds several whole copies of its encoding (issue #42). In the
// new protocol the result carries the server identity in _meta and resultType "complete", the
// last member the SDK's encoder writes.
func (s *Service) appendTexts(w io.Writer, b []byte, texts []string, isErr, newProtocol bool) ([]byte, error) {
	b = append(b, '{')
	if newProtocol {
		b = append(b, `"_meta":{"`+metaServerInfo+`":`...)
		b = append(b, s.implJSON...)
		b = append(b, "},"...)
	}
	b = append(b, `"content":[`...)
	out := bounded{b: b, max: math.MaxInt}
	for i, text := range texts {
		if i > 0 {
			out.byte(',')
		}
		out.str(`{"type":"text","text":"`)
		for len(text) > 0 {
			n := runeCut(text, streamChunk)
			out.escape(text[:n])
			text = text[n:]
			if w != nil && len(out.b) >= streamFlush {
				if _, err := w.Write(out.b); err != nil {
					return nil, err
				}
				out.b = out.b[:0]
			}
		}
		out.str(`"}`)
	}
	b = append(out.b, ']')
	if isErr {
		b = append(b, `,"isError":true`...)
	}
	if newProtocol {
		b = append(b, `,"resultType":"complete"`...)
	}
	return append(b, '}'), nil
}

// runeCut is how many bytes of s, at most n, end on a character boundary (all of s when shorter):
// escaping s in such pieces writes what escaping it whole writes.
func runeCut(s string, n int) int {
	if len(s) <= n {
		return len(s)
	}
	for k := n; k > n-utf8.UTFMax && k > 0; k-- {
		if utf8.RuneStart(s[k]) {
			return k
		}
	}
	return n
}

// appendResult appends res as the SDK writes it: a result of one plain text content (what
// operation tools answer) directly, any other through the SDK types' encoders. In the new
// protocol the result carries the server identity in _meta (unless it carries one) and
// resultType "complete", the last member the SDK's encoder writes.
func (s *Service) appendResult(b []byte, res *sdk.CallToolResult, newProtocol bool) ([]byte, error) {
	if texts, ok := textContents(res); ok {
		return s.appendTexts(nil, b, texts, res.IsError, newProtocol)
	}
	if res.Content == nil {
		res.Content = []sdk.Content{} // the SDK's "avoid null"
	}
	if newProtocol && res.Meta[metaServerInfo] == nil {
		if res.Meta == nil {
			res.Meta = sdk.Meta{}
		}
		res.Meta[metaServerInfo] = s.impl
	}
	result, err := json.Marshal(res)
	if err != nil || len(result) < 2 {
		return b, fmt.Errorf("encode result: %w", err)
	}
	if !newProtocol {
		return append(b, result...), nil
	}
	b = append(b, result[:len(result)-1]...)
	return append(b, `,"resultType":"complete"}`...), nil
}

// textContents returns the texts of res when it is text contents only (one or more) with no
// metadata, annotations or structured content.
func textContents(res *sdk.CallToolResult) ([]string, bool) {
	if len(res.Content) == 0 || res.Meta != nil || res.StructuredContent != nil || res.InputRequests != nil || res.RequestState != "" {
		return nil, false
	}
	texts := make([]string, len(res.Content))
	for i, c := range res.Content {
		tc, ok := c.(*sdk.TextContent)
		if !ok || tc.Meta != nil || tc.Annotations != nil {
			return nil, false
		}
		texts[i] = tc.Text
	}
	return texts, true
}

// fastEligible reports whether the request's method and headers are ones the fast path answers
// exactly as the SDK would, and the request's protocol version ("" when the header is absent);
// anything else goes to the SDK, which also answers every error.
func fastEligible(r *http.Request, versions []string) (string, bool) {
	if r.Method != http.MethodPost || r.Body == nil || !isJSON(r.Header.Get("Content-Type")) {
		return "", false
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	if version != "" && !slices.Contains(versions, version) {
		return "", false
	}
	for k := range r.Header {
		switch {
		case k == "Last-Event-Id":
			return "", false // refused on POST
		case k == "Mcp-Method" || k == "Mcp-Name":
			if version < newProtocolVersion {
				return "", false
			}
		case strings.HasPrefix(k, "Mcp-") && k != "Mcp-Protocol-Version":
			return "", false // Mcp-Session-Id, Mcp-Param-*: SDK semantics of their own
		}
	}
	if json, stream := accepts(r.Header.Values("Accept")); !json || !stream {
		return "", false
	}
	// The SDK's DNS-rebinding protection: a loopback listener refuses a non-loopback Host.
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil && isLoopback(la.String()) && !isLoopback(r.Host) {
		return "", false
	}
	return version, true
}

// isJSON reports whether a Content-Type's media type is application/json.
func isJSON(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// accepts reports whether Accept values admit application/json and text/event-stream, by the
// SDK's rule (base media types, wildcards, parameters ignored).
func accepts(values []string) (json, stream bool) {
	for _, v := range values {
		for raw := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(raw, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				stream = true
			case "*/*":
				json, stream = true, true
			}
		}
	}
	return json, stream
}

// isLoopback reports whether a host or host:port names the loopback interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// readBody reads the request body up to the SDK's default limit. When the body is longer (the
// SDK answers 413), empty or unreadable, whole is false and r.Body is restored for the SDK.
func readBody(r *http.Request) (body []byte, whole bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, sdk.DefaultMaxRequestBodyBytes+1))
	if err == nil && len(body) > 0 && len(body) <= sdk.DefaultMaxRequestBodyBytes {
		_ = r.Body.Close()
		return body, true
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), errReader{err}, r.Body), r.Body}
	return nil, false
}

// errReader replays a read error once the bytes read before it are consumed.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

// toolCall is a parsed tools/call request.
type toolCall struct {
	id        json.RawMessage // an integer or a string without escapes, echoed verbatim
	name      string
	arguments json.RawMessage // absent or an object
	meta      *callMeta       // the SEP-2575 triple, nil when absent
}

// callMeta is the _meta of a call in the new protocol; any other key leaves the call to the SDK.
type callMeta struct {
	ProtocolVersion    json.RawMessage // io.modelcontextprotocol/protocolVersion
	ClientCapabilities json.RawMessage // io.modelcontextprotocol/clientCapabilities
	ClientInfo         json.RawMessage // io.modelcontextprotocol/clientInfo
}

// parseToolCall parses body as one JSON-RPC request "tools/call" with exactly the members
// jsonrpc, id, method and params, params holding name and optionally arguments and _meta. ok is
// false for anything else, including forms the SDK would normalise (non-integer ids, escaped
// strings, null arguments), so that the SDK answers them.
func parseToolCall(body []byte) (toolCall, bool) {
	if !json.Valid(body) {
		return toolCall{}, false
	}
	msg, ok := members(body, "jsonrpc", "id", "method", "params")
	if !ok || string(msg["jsonrpc"]) != `"2.0"` || string(msg["method"]) != `"tools/call"` || !plainID(msg["id"]) {
		return toolCall{}, false
	}
	params, ok := members(msg["params"], "_meta", "name", "arguments")
	if !ok {
		return toolCall{}, false
	}
	name, ok := plainString(params["name"])
	args := params["arguments"]
	if !ok || (args != nil && args[0] != '{') {
		return toolCall{}, false
	}
	call := toolCall{id: msg["id"], name: name, arguments: args}
	if raw := params["_meta"]; raw != nil && string(raw) != "null" {
		meta, ok := members(raw, metaProtocolVersion, metaClientCapabilities, metaClientInfo)
		if !ok {
			return toolCall{}, false
		}
		call.meta = &callMeta{ProtocolVersion: meta[metaProtocolVersion], ClientCapabilities: meta[metaClientCapabilities], ClientInfo: meta[metaClientInfo]}
	}
	return call, true
}

// The _meta keys of a call in the new protocol (SEP-2575).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
)

// members returns the members of raw, a JSON object, by their names (exact: the SDK's decoder
// matches member names exactly, where encoding/json's struct decoding would fold case; with
// duplicates the last wins) and reports false for anything else: not an object, or a member not
// named in allowed. raw is part of a body parseToolCall checked with json.Valid.
func members(raw json.RawMessage, allowed ...string) (map[string]json.RawMessage, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	m := make(map[string]json.RawMessage, len(allowed))
	ok := jsontop.Members(raw, func(name, value []byte) {
		if !slices.Contains(allowed, string(name)) {
			m = nil
		}
		if m != nil {
			m[string(name)] = value
		}
	})
	return m, ok && m != nil
}

// matches reports whether the call fits the protocol version of its request as the SDK
// requires it: before newProtocolVersion no _meta (the SDK then refuses a _meta protocol
// version); from it on the _meta triple with the header's version, valid client capabilities
// and client info, and Mcp-Method and Mcp-Name headers naming the call.
func (c toolCall) matches(h http.Header, version string, seen *metaSeen) bool {
	if version < newProtocolVersion {
		return c.meta == nil
	}
	m := c.meta
	if m == nil || string(m.ProtocolVersion) != `"`+version+`"` ||
		h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") != c.name {
		return false
	}
	return seen.decodes(m.ClientCapabilities, decodesCapabilities) &&
		(m.ClientInfo == nil || seen.decodes(m.ClientInfo, decodesClientInfo))
}

// decodesCapabilities reports whether raw is client capabilities the SDK decodes.
func decodesCapabilities(raw json.RawMessage) bool {
	var caps struct {
		sdk.ClientCapabilities
		//lint:ignore SA1019 clients may still declare roots; the SDK's own decoding accepts them
		Roots *sdk.RootCapabilities `json:"roots,omitempty"`
	}
	return decodesObject(raw, &caps)
}

// decodesClientInfo reports whether raw is a client identity the SDK decodes.
func decodesClientInfo(raw json.RawMessage) bool {
	var client sdk.Implementation
	return decodesObject(raw, &client)
}

// metaSeen remembers the _meta objects that decoded, by their bytes: a client sends the same
// capabilities and identity with every call, so a call checks them with a lookup instead of
// decoding them into the SDK's types again. It keeps at most metaSeenMax objects and starts
// again empty when full (a client that varies them only pays the decoding).
type metaSeen struct {
	mu sync.RWMutex
	m  map[string]struct{}
}

const metaSeenMax = 256

// decodes reports whether raw decodes, asking decode unless raw decoded before.
func (s *metaSeen) decodes(raw json.RawMessage, decode func(json.RawMessage) bool) bool {
	s.mu.RLock()
	_, ok := s.m[string(raw)]
	s.mu.RUnlock()
	if ok {
		return true
	}
	if !decode(raw) {
		return false
	}
	s.mu.Lock()
	if len(s.m) >= metaSeenMax || s.m == nil {
		s.m = make(map[string]struct{}, metaSeenMax)
	}
	s.m[string(raw)] = struct{}{}
	s.mu.Unlock()
	return true
}

// decodesObject reports whether raw is a JSON object that decodes into v. encoding/json folds
// member names where the SDK's decoder does not, so it can only refuse more objects than the
// SDK (a member in another case that does not fit its field's type), never fewer: a refused call
// goes to the SDK, which answers it.
func decodesObject(raw json.RawMessage, v any) bool {
	return len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, v) == nil
}

// plainID reports whether a JSON-RPC id is one the SDK echoes unchanged: an integer of at most
// 15 digits without a leading zero or "-0" (exact in the float64 the SDK decodes it to) or a
// string without escapes.
func plainID(id json.RawMessage) bool {
	if _, ok := plainString(id); ok {
		return true
	}
	digits := bytes.TrimPrefix(id, []byte("-"))
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(id) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// plainString returns the value of a JSON string with no escapes and no characters the SDK's
// encoder would write differently.
func plainString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	for _, c := range s {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return "", false
		}
	}
	return string(s), true
}

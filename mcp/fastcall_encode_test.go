package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAppendResult: the direct encoding of a result of text contents equals the SDK types'
// encoding (which TestFastCallMatchesSDK checks against the SDK's answers), for texts JSON
// escapes, tool errors, one and two contents, both protocol generations, and written in pieces
// to a connection (texts longer than the pieces, multi-byte characters across their borders).
func TestAppendResult(t *testing.T) {
	t.Parallel()
	s := &Service{impl: &sdk.Implementation{Name: "svc <&>", Version: "v1.2.3"}}
	s.implJSON, _ = json.Marshal(s.impl) // as New does
	long := strings.Repeat("é中\"\x01\U0001F600<\xff", 3*streamChunk/7)
	for _, texts := range [][]string{{""}, {"a"}, {`{"a":7}`}, {`<b>&"\</b>`}, {"\u2028\u2029\t\n\x00"}, {"é中文"}, {"\xff"},
		{`[{"a":1}]`, "note"}, {long}, {long, long[1:]}} {
		for _, isErr := range []bool{false, true} {
			for _, newProtocol := range []bool{false, true} {
				contents := make([]sdk.Content, len(texts))
				for i, text := range texts {
					contents[i] = &sdk.TextContent{Text: text}
				}
				plain := &sdk.CallToolResult{IsError: isErr, Content: contents}
				if _, ok := textContents(plain); !ok {
					t.Fatalf("textContents(%.40q) refused a result of text contents", texts)
				}
				// An empty, non-nil Meta takes the generic path and encodes the same.
				generic := &sdk.CallToolResult{IsError: isErr, Content: contents, Meta: sdk.Meta{}}
				want, err := s.appendResult(nil, generic, newProtocol)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.appendResult(nil, plain, newProtocol)
				if err != nil || string(got) != string(want) {
					t.Errorf("texts %.40q, error %t, new protocol %t:\n got %.200s\nwant %.200s", texts, isErr, newProtocol, got, want)
				}
				var conn bytes.Buffer
				rest, err := s.appendTexts(&conn, nil, texts, isErr, newProtocol)
				if err != nil || conn.String()+string(rest) != string(want) {
					t.Errorf("texts %.40q in pieces, error %t, new protocol %t: differs from the SDK's encoding", texts, isErr, newProtocol)
				}
			}
		}
	}
}

package mcp

import (
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAppendResult: the direct encoding of a plain text result equals the SDK types' encoding
// (which TestFastCallMatchesSDK checks against the SDK's answers), for texts JSON escapes, tool
// errors and both protocol generations.
func TestAppendResult(t *testing.T) {
	t.Parallel()
	s := &Service{impl: &sdk.Implementation{Name: "svc <&>", Version: "v1.2.3"}}
	s.implJSON, _ = json.Marshal(s.impl) // as New does
	for _, text := range []string{"", "a", `{"a":7}`, `<b>&"\</b>`, "\u2028\u2029\t\n\x00", "é中文", "\xff"} {
		for _, isErr := range []bool{false, true} {
			for _, newProtocol := range []bool{false, true} {
				plain := &sdk.CallToolResult{IsError: isErr, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
				if _, ok := plainText(plain); !ok {
					t.Fatalf("plainText(%q) refused a plain result", text)
				}
				// An empty, non-nil Meta takes the generic path and encodes the same.
				generic := &sdk.CallToolResult{IsError: isErr, Content: []sdk.Content{&sdk.TextContent{Text: text}}, Meta: sdk.Meta{}}
				got, err := s.appendResult(nil, plain, newProtocol)
				if err != nil {
					t.Fatal(err)
				}
				want, err := s.appendResult(nil, generic, newProtocol)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Errorf("text %q, error %t, new protocol %t:\n got %s\nwant %s", text, isErr, newProtocol, got, want)
				}
			}
		}
	}
}

package integration

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaURL is the address a contract schema compiles under. Its scheme has no loader, so a
// relative reference resolves to another mem: address and is refused like any external one.
const schemaURL = "mem:///schema.json"

// errExternalRef is closedLoader's answer; it never says whether the target exists.
var errExternalRef = errors.New("external reference refused")

// closedLoader is the compiler's URL loader. It loads nothing: the library answers the drafts'
// metaschemas from its embedded copies and the schema itself from AddResource before it asks
// the loader, so every other address ($ref or $schema to file:, http(s):, urn:, a relative
// path) ends here. The library's default loader reads file: URLs, which made contract
// schemas an oracle for the server's files (issue #31 item 5).
type closedLoader struct{}

var _ jsonschema.URLLoader = closedLoader{}

// Load refuses every url with the same error, read or not.
func (closedLoader) Load(string) (any, error) { return nil, errExternalRef }

// compileJSONSchema compiles raw as JSON Schema (draft 2020-12 unless $schema names another)
// with closedLoader: references inside the schema (#/$defs/…, its own $id and anchors) and the
// drafts' metaschemas resolve; anything else is an error naming the reference as given.
func compileJSONSchema(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(closedLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(schemaURL)
	var le *jsonschema.LoadURLError
	if errors.As(err, &le) && errors.Is(le.Err, errExternalRef) {
		return nil, fmt.Errorf("reference %q is outside the schema: only references inside it (#/$defs/…) and the JSON Schema drafts' metaschemas are allowed", le.URL)
	}
	return sch, err
}

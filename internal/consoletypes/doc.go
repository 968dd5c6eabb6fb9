// Package consoletypes writes the TypeScript declarations the operator console (console/web)
// compiles against: one entry per /api operation, keyed "resource/action", with the params and
// result types that rpc.Handle registered it with (rpc.OperationInfo.Params and .Result),
// translated by encoding/json's rules:
//
//   - a field's name is its json tag's name, else the Go name; "-" and unexported fields are
//     left out; omitempty or omitzero makes the field optional (`name?:`);
//   - an embedded struct without a tag name lends its fields (encoding/json's dominance rule
//     when two have the same name: the shallowest wins, then the only tagged one, else none);
//     the fields of an embedded pointer are optional, since a nil one is left out;
//   - a pointer is `T | null` (a nil pointer encodes as null) unless the field is optional;
//   - time.Time, []byte, a json:",string" field and any encoding.TextMarshaler are strings;
//     json.RawMessage and interfaces are unknown; a json.Marshaler is typed by what its zero
//     value encodes to (a string, number or boolean), else it is an error that names the type;
//   - slices and arrays are `T[]` and maps `Record<string, T>`: the generator assumes handlers
//     answer empty collections, not nil ones (which encoding/json writes as null);
//   - every named Go type is declared once, under its Go name (generic instantiations as
//     Name_Arg; a name two packages share gets the package as a prefix).
//
// The console's call(op, params) takes Input<params>: every field optional at every depth,
// because the engine decodes absent params to their zero values (spec §2.1) and checks what is
// required in the operation's Validate, which no type carries.
//
// The file is generated from the engine the svc binary builds (every module on) by the test
// TestConsoleOperationTypes in cmd/svc, which fails when the committed file differs:
//
//	go test ./cmd/svc -run TestConsoleOperationTypes -update   # or: scripts/console.sh types
package consoletypes

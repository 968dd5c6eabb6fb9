package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

type namedString string

// flatAll has a field of every kind flatStruct decodes, and the tag forms it must read as
// encoding/json does.
type flatAll struct {
	S     string        `json:"s"`
	B     bool          `json:"b"`
	I     int           `json:"i"`
	I8    int8          `json:"i8"`
	I16   int16         // untagged: its Go name
	I32   int32         `json:"i32,omitempty"`
	I64   int64         `json:"id"`
	U     uint          `json:",omitempty"` // empty tag name: its Go name
	U8    uint8         `json:"u8"`
	U64   uint64        `json:"u64"`
	Up    uintptr       `json:"up"`
	F32   float32       `json:"f32"`
	F64   float64       `json:"f64"`
	D     time.Duration `json:"d"`
	Named namedString   `json:"named"`
	Skip  string        `json:"-"`
	//lint:ignore SA5008 deliberate: tags encoding/json reads in its own way, which the flat encoder must match
	Dash  string `json:"-,"`  // named "-"
	Space string `json:"a b"` // a valid tag name
	//lint:ignore SA5008 deliberate: tags encoding/json reads in its own way, which the flat encoder must match
	Quote string `json:"bad\""` // an invalid tag name: its Go name
	//lint:ignore U1000 an unexported field the encoder must skip
	lower string
}

type textName string

func (n *textName) UnmarshalText(b []byte) error { *n = textName("t:" + string(b)); return nil }

type selfDecoding struct{ A string }

func (s *selfDecoding) UnmarshalJSON([]byte) error { s.A = "custom"; return nil }

type embedded struct{ A string }

func TestNewFlatStructOnlyForTypesItMirrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		typ  reflect.Type
		want bool
	}{
		{"every scalar kind", reflect.TypeFor[flatAll](), true},
		{"bench params", reflect.TypeFor[benchParams](), true},
		{"empty struct", reflect.TypeFor[struct{}](), true},
		{"not a struct", reflect.TypeFor[map[string]string](), false},
		{"pointer to struct", reflect.TypeFor[*flatAll](), false},
		{"string option", reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](), false},
		{"embedded", reflect.TypeFor[struct{ embedded }](), false},
		{"json.Number", reflect.TypeFor[struct{ N json.Number }](), false},
		{"text unmarshaler field", reflect.TypeFor[struct{ N textName }](), false},
		{"json unmarshaler", reflect.TypeFor[selfDecoding](), false},
		{"slice field", reflect.TypeFor[struct{ IDs []int64 }](), false},
		{"pointer field", reflect.TypeFor[struct{ N *int }](), false},
		{"interface field", reflect.TypeFor[struct{ V any }](), false},
		{"nested struct", reflect.TypeFor[struct{ In struct{ A int } }](), false},
		{"names equal but for case", reflect.TypeFor[struct {
			A string `json:"name"`
			B string `json:"Name"`
		}](), false},
		{"same name twice", reflect.TypeFor[struct {
			A string `json:"x"`
			X string
		}](), false},
		{"non-ASCII name", reflect.TypeFor[struct {
			K string `json:"\u212a"`
		}](), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := newFlatStruct(tt.typ) != nil; got != tt.want {
				t.Errorf("newFlatStruct(%s) != nil = %v, want %v", tt.typ, got, tt.want)
			}
		})
	}
}

var flatParamsCases = []string{
	`{}`, ` { } `, `{"s":"x","id":9007199254740993}`, `{"S":"upper","ID":1,"Id":2}`, `{"s":1}`,
	`{"s":true}`, `{"s":null}`, `{"s":"a","s":null}`, `{"s":"a","s":"b"}`, `{"s":{}}`, `{"s":[]}`,
	`{"s":"esc\"aped"}`, `{"s":"\u00e9"}`, "{\"s\":\"\xff\"}", `{"s":"日本"}`, `{"b":true,"b":false}`,
	`{"b":"true"}`, `{"b":0}`, `{"i":-0}`, `{"i":1.0}`, `{"i":1e2}`, `{"i":"1"}`, `{"i8":127}`,
	`{"i8":128}`, `{"i8":-128}`, `{"i8":-129}`, `{"I16":32768}`, `{"i16":-5}`, `{"id":999999999999999999}`,
	`{"id":9223372036854775807}`, `{"id":9223372036854775808}`, `{"id":-9223372036854775808}`,
	`{"id":-9223372036854775809}`, `{"id":00}`, `{"u8":255}`, `{"u8":256}`, `{"u8":-0}`, `{"u8":-1}`,
	`{"u64":18446744073709551615}`, `{"u64":18446744073709551616}`, `{"U":3}`, `{"up":7}`,
	`{"f32":1.5}`, `{"f32":3.5e38}`, `{"f32":1e-50}`, `{"f64":1e308}`, `{"f64":1e309}`, `{"f64":-0}`,
	`{"f64":"1"}`, `{"f64":true}`, `{"d":1000}`, `{"d":1.5}`, `{"named":"n"}`, `{"-":"dash"}`,
	`{"Skip":"no"}`, `{"a b":"space"}`, `{"Quote":"q"}`, `{"bad\"":"q"}`, `{"lower":"x"}`,
	`{"unknown":{"deep":[1,{"x":null}]},"s":"after"}`, `{"\u0073":"escaped key"}`, `{"ſ":"long s"}`,
	`{"s":"x","i":"bad","id":5}`, `null`, `[]`, `"s"`, `{"id":12345678901234567890123}`,
	`{"S":"a","s":"b"}`, `{"s":"b","S":"a"}`, `{"A B":"fold"}`, `{"D":5,"f32":null}`,
}

// TestFlatParamsMatchesUnmarshal, TestFlatParamsRandomObjects and the fuzz targets hold
// decodeParams with a flat plan to json.Unmarshal: the same inputs fail, and the others decode
// to the same value.
func TestFlatParamsMatchesUnmarshal(t *testing.T) {
	t.Parallel()
	for _, in := range flatParamsCases {
		checkFlatParams(t, []byte(in))
	}
}

// TestFlatParamsRandomObjects draws objects from every key form (exact, other case, unknown,
// escaped, non-ASCII) and value kind flatAll meets, with a fixed seed.
func TestFlatParamsRandomObjects(t *testing.T) {
	t.Parallel()
	keys := []string{`"s"`, `"S"`, `"b"`, `"i"`, `"I8"`, `"i16"`, `"I32"`, `"id"`, `"Id"`, `"u"`, `"u8"`,
		`"U64"`, `"up"`, `"f32"`, `"F64"`, `"d"`, `"named"`, `"Skip"`, `"-"`, `"a b"`, `"A B"`, `"Quote"`,
		`"lower"`, `"x"`, `"\u0069d"`, `"ſ"`, `"\u212a"`, `""`}
	values := []string{`null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `127`, `128`, `-129`, `255`, `256`,
		`32767`, `-32769`, `2147483648`, `9007199254740993`, `999999999999999999`, `-999999999999999999`,
		`9223372036854775807`, `9223372036854775808`, `18446744073709551615`, `18446744073709551616`,
		`1.5`, `-2.25e3`, `1e38`, `3.5e38`, `1e308`, `1e309`, `1e-400`, `0.1`, `""`, `"x"`, `"日本"`,
		`"\u00e9"`, `"a\"b"`, `"\ud800"`, "\"\xff\"", `"1"`, `"true"`, `{}`, `{"s":"in"}`, `[]`, `[1,"x"]`}
	r := rand.New(rand.NewPCG(3, 80))
	for range 20000 {
		var b strings.Builder
		b.WriteByte('{')
		for i := range r.IntN(5) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(keys[r.IntN(len(keys))] + ":" + values[r.IntN(len(values))])
		}
		b.WriteByte('}')
		checkFlatParams(t, []byte(b.String()))
	}
}

func FuzzFlatParams(f *testing.F) {
	for _, in := range flatParamsCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFlatParams(t, data)
	})
}

// FuzzFlatParamsFields builds objects from fuzzed keys and values, so the fuzzer spends its time
// on key matching and value kinds rather than on JSON syntax.
func FuzzFlatParamsFields(f *testing.F) {
	f.Add("id", "9007199254740993", "s", `"x"`)
	f.Add("ID", "-12", "I16", "1e3")
	f.Add("f32", "3.4e38", "u8", `"1"`)
	f.Add("a b", `"\u00e9"`, "-", "null")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		q1, _ := json.Marshal(k1)
		q2, _ := json.Marshal(k2)
		checkFlatParams(t, []byte("{"+string(q1)+":"+v1+","+string(q2)+":"+v2+"}"))
		checkFlatParams(t, []byte(`{"`+k1+`":`+v1+`}`))
	})
}

var flatAllPlan = planParams(reflect.TypeFor[flatAll]())

func checkFlatParams(t *testing.T, data []byte) {
	t.Helper()
	if !json.Valid(data) || !strings.HasPrefix(strings.TrimSpace(string(data)), "{") {
		return // the envelope admits only valid JSON, and params only as an object
	}
	if flatAllPlan.flat == nil {
		t.Fatal("flatAll has no flat plan")
	}
	var got, want flatAll
	gotErr := decodeParams(data, &got, flatAllPlan)
	if checkParamText(data) != nil { // invalid UTF-8 or a NUL: refused before decoding
		if !errors.Is(gotErr, ErrValidationInvalid) {
			t.Fatalf("%q: decodeParams error %v, want ErrValidationInvalid", data, gotErr)
		}
		return
	}
	wantErr := json.Unmarshal(data, &want)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%q: decodeParams error %v, json.Unmarshal error %v", data, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decodeParams = %+v, json.Unmarshal = %+v", data, got, want)
	}
}

// BenchmarkParams decodes the bench call's params with the flat plan and with encoding/json.
func BenchmarkParams(b *testing.B) {
	raw := json.RawMessage(`{"id":9007199254740993,"name":"widget"}`)
	for _, bb := range []struct {
		name string
		plan paramsPlan
	}{
		{"flat", planParams(reflect.TypeFor[benchParams]())},
		{"encoding/json", paramsPlan{}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var p benchParams
				if err := decodeParams(raw, &p, bb.plan); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// flatOut has every kind flatStruct encodes, with and without omitempty.
type flatOut struct {
	S    string        `json:"s"`
	SE   string        `json:"se,omitempty"`
	B    bool          `json:"b"`
	BE   bool          `json:"be,omitempty"`
	I    int           `json:"i"`
	I8   int8          `json:"i8,omitempty"`
	I64  int64         `json:"id"`
	U16  uint16        `json:"u16,omitempty"`
	U64  uint64        // untagged: its Go name
	Up   uintptr       `json:"up"`
	F32  float32       `json:"f32"`
	F32E float32       `json:"f32e,omitempty"`
	F64  float64       `json:"f64"`
	F64E float64       `json:"f64e,omitempty"`
	D    time.Duration `json:",omitempty"`
	N    namedString   `json:"n"`
	Skip string        `json:"-"`
	//lint:ignore SA5008 deliberate: tags encoding/json reads in its own way, which the flat encoder must match
	Dash  string `json:"-,"`
	lower string
}

type allOmitted struct {
	A string `json:"a,omitempty"`
	B int    `json:"b,omitempty"`
}

type selfEncoding struct{ A string }

func (selfEncoding) MarshalJSON() ([]byte, error) { return []byte(`"custom"`), nil }

type textOut string

func (textOut) MarshalText() ([]byte, error) { return []byte("t"), nil }

func TestNewFlatStructRefusesEncodingSpecials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		typ  reflect.Type
	}{
		{"omitzero", reflect.TypeFor[struct {
			A int `json:"a,omitzero"`
		}]()},
		{"json marshaler", reflect.TypeFor[selfEncoding]()},
		{"text marshaler field", reflect.TypeFor[struct{ T textOut }]()},
		{"name HTML escapes", reflect.TypeFor[struct {
			A int `json:"a<b"`
		}]()},
	}
	for _, tt := range tests {
		if newFlatStruct(tt.typ) != nil {
			t.Errorf("%s: newFlatStruct(%s) != nil, want nil", tt.name, tt.typ)
		}
	}
}

// TestFlatResultMatchesEncoder and FuzzFlatResult hold appendJSON to json.Encoder's output (the
// engine's: HTML-safe, newline dropped) byte for byte, and to its refusals.
func TestFlatResultMatchesEncoder(t *testing.T) {
	t.Parallel()
	strs := []string{"", "x", "日本", "<a&b>", "q\"b\\s", "\b\f\n\r\t\x00\x1f\x7f", "\u2028\u2029", "\xff\xfe", "é"}
	floats := []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 1.5e300,
		5e-324, math.MaxFloat32, math.MaxFloat64, 123456789.125, math.NaN(), math.Inf(1), math.Inf(-1)}
	ints := []int64{0, 1, -1, 127, -128, 255, 65535, math.MaxInt64, math.MinInt64}
	for i, s := range strs {
		for j, f := range floats {
			n := ints[(i+j)%len(ints)]
			checkFlatResult(t, flatOut{S: s, SE: s, B: j%2 == 0, BE: j%3 == 0, I: int(n), I8: int8(n),
				I64: n, U16: uint16(n), U64: uint64(n), Up: uintptr(n), F32: float32(f), F32E: float32(f),
				F64: f, F64E: f, D: time.Duration(n), N: namedString(s), Skip: "x", Dash: s, lower: "x"})
		}
	}
	checkFlatResult(t, allOmitted{})
	checkFlatResult(t, allOmitted{A: "a"})
	checkFlatResult(t, benchResult{ID: 9007199254740993, Name: "widget", OK: true})
}

func FuzzFlatResult(f *testing.F) {
	f.Add("x", int64(9007199254740993), uint64(1), math.Float64bits(0.1), math.Float32bits(1e-7), true)
	f.Add("<\u2028>", int64(-1), uint64(0), math.Float64bits(1e21), math.Float32bits(3.4e38), false)
	f.Fuzz(func(t *testing.T, s string, n int64, u uint64, f64 uint64, f32 uint32, b bool) {
		checkFlatResult(t, flatOut{S: s, SE: s, B: b, BE: b, I: int(n), I8: int8(n), I64: n,
			U16: uint16(u), U64: u, Up: uintptr(u), F32: math.Float32frombits(f32),
			F32E: math.Float32frombits(f32), F64: math.Float64frombits(f64), F64E: math.Float64frombits(f64),
			D: time.Duration(n), N: namedString(s)})
	})
}

func checkFlatResult[R any](t *testing.T, v R) {
	t.Helper()
	fs := newFlatStruct(reflect.TypeFor[R]())
	if fs == nil {
		t.Fatalf("%T has no flat codec", v)
	}
	got, ok := fs.appendJSON(nil, reflect.ValueOf(v))
	var want bytes.Buffer
	err := json.NewEncoder(&want).Encode(v)
	if !ok {
		if err == nil {
			t.Fatalf("%+v: appendJSON refused, encoding/json wrote %s", v, want.Bytes())
		}
		return
	}
	if err != nil {
		t.Fatalf("%+v: appendJSON wrote %s, encoding/json refused: %v", v, got, err)
	}
	if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(got, w) {
		t.Fatalf("appendJSON =\n%s\nencoding/json =\n%s", got, w)
	}
}

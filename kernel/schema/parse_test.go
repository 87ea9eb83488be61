package schema

import (
	"errors"
	"fmt"
	"github.com/google/go-cmp/cmp"
	"os"
	"strings"
	"testing"
)

const socialText = `# the social graph
node Person {
  name: string
  age: int64?
}
node Company { name: string }
edge WorksAt: Person -> Company @card(0..1) {
  since: timestamp?,
}
edge Knows: Person -> Person
`

// TestParseValid pins that the text form and the Go API mean the same thing.
func TestParseValid(t *testing.T) {
	got, err := Parse([]byte(socialText))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if want := social(); !cmp.Equal(got, want) {
		t.Fatalf("Parse =\n%#v\nwant\n%#v\ndiff (-got +want):\n%s", got, want, cmp.Diff(got, want))
	}
	all, err := Parse([]byte("node A { s: string b: bytes? t: timestamp f: float64 i: int64 ok: bool? }\n" +
		"edge E: A -> A @card(2..*) {}\nedge F: A -> A @card(3..3) {}"))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	wantAll := Schema{
		Nodes: []NodeType{{Name: "A", Props: []Property{req("s", String), opt("b", Bytes), req("t", Timestamp), req("f", Float64), req("i", Int64), opt("ok", Bool)}}},
		Edges: []EdgeType{{Name: "E", From: "A", To: "A", Card: Card(2, Unbounded)}, {Name: "F", From: "A", To: "A", Card: Card(3, 3)}},
	}
	if !cmp.Equal(all, wantAll) {
		t.Fatalf("Parse =\n%#v\nwant\n%#v\ndiff (-all +wantAll):\n%s", all, wantAll, cmp.Diff(all, wantAll))
	}
	if empty, err := Parse(nil); err != nil || len(empty.Nodes)+len(empty.Edges) != 0 {
		t.Fatalf("Parse(nil) = %v, %v", empty, err)
	}
}

// TestParseErrors pins that every syntax and rule violation in the text
// form is a *ParseError pointing at the offending line and column.
func TestParseErrors(t *testing.T) {
	wide := "node A { p: int64" + manyProps(MaxPropsPerType) + "}"
	wideCol := strings.Index(wide, "q255:") + 1 // the 257th property
	cases := []struct {
		name      string
		text      string
		line, col int
		syntax    bool // ErrSyntax, else a *ValidationError
		msg       string
	}{
		{"unknown keyword", "nod A {}", 1, 1, true, `expected "node" or "edge"`},
		{"garbage after name", "node A\nnode B }", 2, 8, true, `expected "node" or "edge"`},
		{"unclosed body", "node A {\n  x: string\n", 3, 1, true, "found end of input"},
		{"missing colon", "node A {\n  x string\n}", 2, 5, true, `expected ":"`},
		{"unknown kind", "node A {\n  x: text\n}", 2, 6, true, `unknown property kind "text"`},
		{"kind is a number", "node A { x: 5 }", 1, 13, true, "expected a property kind"},
		{"bad character", "node A {\n  x: string;\n}", 2, 12, true, `unexpected character ';'`},
		{"non-ascii", "node Ä {}", 1, 6, true, "unexpected character"},
		{"edge missing arrow", "node A {}\nedge E: A A {}", 2, 11, true, `expected "->"`},
		{"edge missing from", "edge E: -> A {}", 1, 9, true, "expected the from node type"},
		{"unknown annotation", "node A {}\nedge E: A -> A @cardinality(0..1) {}", 2, 17, true, `expected annotation "card"`},
		{"card missing dots", "node A {}\nedge E: A -> A @card(0,1) {}", 2, 23, true, `expected ".."`},
		{"card max zero", "node A {}\nedge E: A -> A @card(0..0) {}", 2, 25, true, "maximum must be at least 1"},
		{"card negative", "node A {}\nedge E: A -> A @card(-1..2) {}", 2, 22, true, "unexpected character '-'"},
		{"card too big", "node A {}\nedge E: A -> A @card(0..99999999999) {}", 2, 25, true, "larger than the limit"},
		{"card min > max", "node A {}\n\nedge E: A -> A @card(3..2) {}", 3, 16, false, "min > max"},
		{"duplicate type", "node A {}\n# again\nnode A {}", 3, 6, false, "duplicate type name"},
		{"unknown to type", "node A {}\nedge E: A -> B {}", 2, 14, false, `to type "B"`},
		{"unknown from type", "node A {}\nedge E: C -> A {}", 2, 9, false, `from type "C"`},
		{"reserved prop", "node A {\n  name: string\n  id: string\n}", 3, 3, false, "reserved"},
		{"duplicate prop", "node A {\n  x: int64\n  x: bool\n}", 3, 3, false, "duplicate property"},
		{"underscore type", "node _A {}", 1, 6, false, "must start with an ASCII letter"},
		{"keyword type name", "node node {}", 1, 6, false, "reserved keyword"},
		{"too many props", wide, 1, wideCol, true, "more than 256 properties"},
		{"too large", strings.Repeat(" ", MaxTextBytes+1), 1, 1, true, "more than the limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.text))
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidSchema) {
				t.Fatalf("Parse = %v, want a *ParseError matching ErrInvalidSchema", err)
			}
			if pe.Line != tc.line || pe.Col != tc.col || !strings.Contains(pe.Msg, tc.msg) {
				t.Fatalf("Parse = %d:%d %q, want %d:%d ~%q", pe.Line, pe.Col, pe.Msg, tc.line, tc.col, tc.msg)
			}
			var ve *ValidationError
			if gotSyntax := errors.Is(err, ErrSyntax); gotSyntax != tc.syntax || gotSyntax == errors.As(err, &ve) {
				t.Fatalf("Parse = %v: ErrSyntax %v, want %v (and a ValidationError otherwise)", err, gotSyntax, tc.syntax)
			}
		})
	}
}

func manyProps(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(" q" + itoa(i) + ": int")
		b.WriteString("64")
	}
	return b.String()
}

// TestParseTestdata parses every testdata/valid/*.schema file: each must parse
// and its contract must match the .contract golden (-update rewrites it).
func TestParseTestdata(t *testing.T) {
	files, err := os.ReadDir("testdata/valid")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".schema") {
			continue
		}
		t.Run(f.Name(), func(t *testing.T) {
			text := mustRead(t, "testdata/valid/"+f.Name())
			s, err := Parse(text)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			c, err := s.Contract()
			if err != nil {
				t.Fatalf("Contract: %v", err)
			}
			golden := "testdata/valid/" + strings.TrimSuffix(f.Name(), ".schema") + ".contract"
			if *update {
				if err := os.WriteFile(golden, c, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want := mustRead(t, golden); string(c) != string(want) {
				t.Fatalf("contract =\n%s\nwant (%s)\n%s", c, golden, want)
			}
		})
	}
}

// TestParseInvalidTestdata parses testdata/invalid/*.schema; each must fail
// at the "# error: LINE:COL" written on its first line.
func TestParseInvalidTestdata(t *testing.T) {
	files, err := os.ReadDir("testdata/invalid")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(f.Name(), func(t *testing.T) {
			text := mustRead(t, "testdata/invalid/"+f.Name())
			var line, col int
			if _, err := fmt.Sscanf(string(text), "# error: %d:%d", &line, &col); err != nil {
				t.Fatalf("first line must be \"# error: LINE:COL\": %v", err)
			}
			_, err := Parse(text)
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != line || pe.Col != col {
				t.Fatalf("Parse = %v, want a ParseError at %d:%d", err, line, col)
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

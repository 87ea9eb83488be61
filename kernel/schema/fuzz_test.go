package schema

import (
	"bytes"
	"errors"
	"github.com/google/go-cmp/cmp"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error is a
// *ParseError with a sane position, and that every schema it accepts has a
// contract which Decode reads back to the same schema and the same bytes.
func FuzzParse(f *testing.F) {
	f.Add([]byte(socialText))
	f.Add([]byte("node A {}\nedge E: A -> A @card(1..*) { x: bytes? }"))
	f.Add([]byte("node A @table(B) @retired(x) {}\nnode B @table(A) {}\nedge E: A -> B @card(0..1) @table(F) { y: int64? }"))
	f.Add([]byte(`node A { s: string @default("a\"b") n: int32? @col(m) @default(-3) f: float64? @default(1e3) t: timestamp? @default("2024-01-02T03:04:05.5Z") b: bytes? @default("\xff") }`))
	f.Fuzz(func(t *testing.T, text []byte) {
		s, err := Parse(text)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Col < 1 || !errors.Is(err, ErrInvalidSchema) {
				t.Fatalf("Parse error %v is not a positioned *ParseError", err)
			}
			return
		}
		c, err := s.Contract()
		if err != nil {
			t.Fatalf("Contract of a parsed schema: %v", err)
		}
		back, err := Decode(c)
		if err != nil {
			t.Fatalf("Decode(Contract): %v\n%s", err, c)
		}
		if !cmp.Equal(normNil(back), normNil(s.Normalized())) {
			t.Fatalf("Decode(Contract(s)) != s:\n%#v\n%#v\ndiff (-normNil(back) +normNil(s.Normalized())):\n%s", back, s.Normalized(), cmp.Diff(normNil(back), normNil(s.Normalized())))
		}
		c2, err := back.Contract()
		if err != nil || !bytes.Equal(c, c2) {
			t.Fatalf("contract not stable: %v\n%s\n%s", err, c, c2)
		}
	})
}

// normNil makes empty slices nil so DeepEqual compares content only.
func normNil(s Schema) Schema {
	if len(s.Nodes) == 0 {
		s.Nodes = nil
	}
	if len(s.Edges) == 0 {
		s.Edges = nil
	}
	for i := range s.Nodes {
		if len(s.Nodes[i].Props) == 0 {
			s.Nodes[i].Props = nil
		}
	}
	for i := range s.Edges {
		if len(s.Edges[i].Props) == 0 {
			s.Edges[i].Props = nil
		}
	}
	return s
}

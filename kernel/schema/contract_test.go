package schema

import (
	"errors"
	"flag"
	"github.com/google/go-cmp/cmp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestContractStable pins that the contract, and so the identity, does not
// depend on type declaration order, and that it round-trips through Decode.
func TestContractStable(t *testing.T) {
	a := social()
	b := social()
	b.Nodes[0], b.Nodes[1] = b.Nodes[1], b.Nodes[0]
	b.Edges[0], b.Edges[1] = b.Edges[1], b.Edges[0]
	ca, err := a.Contract()
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.Contract()
	if err != nil {
		t.Fatal(err)
	}
	if string(ca) != string(cb) {
		t.Fatalf("contracts differ by type order:\n%s\n%s", ca, cb)
	}
	const want = `graphkernel-schema v1
node Company {
  name: string
}
node Person {
  name: string
  age: int64?
}
edge Knows: Person -> Person {}
edge WorksAt: Person -> Company @card(0..1) {
  since: timestamp?
}
`
	if string(ca) != want {
		t.Fatalf("contract =\n%s\nwant\n%s", ca, want)
	}
	id, err := a.ID()
	if err != nil || id != ContractID(ca) || len(id) != 64 {
		t.Fatalf("ID = %q, %v; want sha256 hex of the contract", id, err)
	}
	got, err := Decode(ca)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !cmp.Equal(got, a.Normalized()) {
		t.Fatalf("Decode =\n%#v\nwant\n%#v\ndiff (-got +a.Normalized()):\n%s", got, a.Normalized(), cmp.Diff(got, a.Normalized()))
	}
	// Property order is the column order: it changes the identity.
	c := social()
	c.Nodes[0].Props[0], c.Nodes[0].Props[1] = c.Nodes[0].Props[1], c.Nodes[0].Props[0]
	if idc, _ := c.ID(); idc == id {
		t.Fatal("reordering properties kept the identity")
	}
}

// TestDecodeRejects pins that Decode accepts only canonical contracts.
func TestDecodeRejects(t *testing.T) {
	canon, err := social().Contract()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"no header", strings.TrimPrefix(string(canon), ContractHeader), ErrNotCanonical},
		{"extra space", strings.Replace(string(canon), "name: string", "name:  string", 1), ErrNotCanonical},
		{"comment", string(canon) + "# hi\n", ErrNotCanonical},
		{"unsorted", ContractHeader + "node B {}\nnode A {}\n", ErrNotCanonical},
		{"syntax", ContractHeader + "node B {\n", ErrSyntax},
		{"invalid", ContractHeader + "edge E: A -> A {}\n", ErrInvalidSchema},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.in))
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrInvalidSchema) {
				t.Fatalf("Decode = %v, want %v", err, tc.want)
			}
		})
	}
	_, err = Decode([]byte(ContractHeader + "node B {\n"))
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 {
		t.Fatalf("Decode syntax error = %v, want a ParseError at line 3 (header counted)", err)
	}
}

// TestKindNames pins the text names of the kinds.
func TestKindNames(t *testing.T) {
	for k := String; k <= Bytes; k++ {
		got, ok := KindByName(k.String())
		if !ok || got != k {
			t.Fatalf("KindByName(%s) = %v, %v", k, got, ok)
		}
	}
	if _, ok := KindByName("int"); ok {
		t.Fatal(`KindByName("int") found a kind`)
	}
	if s := Kind(0).String(); s != "kind(0)" {
		t.Fatalf("Kind(0).String() = %q", s)
	}
}

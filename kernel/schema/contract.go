package schema

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// ContractHeader is the first line of every schema contract. It versions the
// contract encoding itself.
const ContractHeader = "graphkernel-schema v1\n"

// ErrNotCanonical is the kind of the error Decode returns for contract bytes
// that parse but are not in canonical form (so their identity would not be
// stable). It matches ErrInvalidSchema too.
var ErrNotCanonical = errors.New("schema: contract is not canonical")

// Contract validates s and returns its canonical encoding: ContractHeader
// followed by the text form of s.Normalized() printed one way only (types
// sorted by name, nodes first; properties in declaration order; one
// property per line, two-space indent, "@col" then "@default"; "@card" only
// when not 0..*). Two
// schemas with the same types and the same property order produce the same
// bytes. These bytes are what the graph stores at Init.
func (s Schema) Contract() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s.Normalized().encode(), nil
}

// ID returns the stable identity of s: the lowercase hex sha256 of its
// contract.
func (s Schema) ID() (string, error) {
	c, err := s.Contract()
	if err != nil {
		return "", err
	}
	return ContractID(c), nil
}

// ContractID returns the identity of contract bytes: lowercase hex sha256.
func ContractID(contract []byte) string {
	sum := sha256.Sum256(contract)
	return hex.EncodeToString(sum[:])
}

// Decode parses contract bytes written by Contract. It accepts only the
// canonical form, so Decode(c) succeeds exactly when Contract of the result
// reproduces c byte for byte; anything else is a typed error matching
// ErrInvalidSchema (ErrNotCanonical, or a *ParseError).
func Decode(contract []byte) (Schema, error) {
	if !bytes.HasPrefix(contract, []byte(ContractHeader)) {
		return Schema{}, fmt.Errorf("decode schema contract: missing header %q: %w", ContractHeader[:len(ContractHeader)-1], errors.Join(ErrNotCanonical, ErrInvalidSchema))
	}
	s, err := Parse(contract[len(ContractHeader):])
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.Line++ // count the header line
		}
		return Schema{}, fmt.Errorf("decode schema contract: %w", err)
	}
	if again := s.Normalized().encode(); !bytes.Equal(again, contract) {
		return Schema{}, fmt.Errorf("decode schema contract: %w", errors.Join(ErrNotCanonical, ErrInvalidSchema))
	}
	return s, nil
}

// String returns the canonical text form of s.Normalized() without the
// contract header, whether or not s is valid.
func (s Schema) String() string {
	return string(s.Normalized().encode()[len(ContractHeader):])
}

func (s Schema) encode() []byte {
	var b bytes.Buffer
	b.WriteString(ContractHeader)
	for _, n := range s.Nodes {
		b.WriteString("node " + n.Name + " ")
		writeTable(&b, n.Table)
		writeRetired(&b, n.Retired)
		writeBody(&b, n.Props)
	}
	for _, e := range s.Edges {
		b.WriteString("edge " + e.Name + ": " + e.From + " -> " + e.To + " ")
		if !e.Card.IsDefault() {
			b.WriteString("@card(" + e.Card.String() + ") ")
		}
		writeTable(&b, e.Table)
		writeRetired(&b, e.Retired)
		writeBody(&b, e.Props)
	}
	return b.Bytes()
}

func writeBody(b *bytes.Buffer, props []Property) {
	if len(props) == 0 {
		b.WriteString("{}\n")
		return
	}
	b.WriteString("{\n")
	for _, p := range props {
		b.WriteString("  " + p.Name + ": " + p.Kind.String())
		if !p.Required {
			b.WriteByte('?')
		}
		if p.Column != "" && p.Column != p.Name {
			b.WriteString(" @col(" + p.Column + ")")
		}
		if p.Default != "" {
			b.WriteString(" @default(" + p.Default + ")")
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
}

// writeTable writes "@table(T) " when a type's storage table is not its
// name (Normalized cleared it then).
func writeTable(b *bytes.Buffer, table string) {
	if table != "" {
		b.WriteString("@table(" + table + ") ")
	}
}

// writeRetired writes "@retired(a, b) " when a type has retired columns.
func writeRetired(b *bytes.Buffer, retired []string) {
	if len(retired) == 0 {
		return
	}
	b.WriteString("@retired(")
	for i, r := range retired {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r)
	}
	b.WriteString(") ")
}

package fuzz

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/data/pred"
)

// FuzzParsePredicate: any text parses to a tree that passes Check or fails
// with a typed pred error; never a panic; what parses prints to text that
// parses back to the same tree.
func FuzzParsePredicate(f *testing.F) {
	for _, s := range []string{
		`age >= 30`,
		`age >= 30 AND id IN ("a", "b") OR NOT score IS NULL`,
		`(ok = true) and at < ts"2024-01-01T00:00:00Z" or raw = x"00ff"`,
		`score > -1.5e3 AND score != inf AND score > -inf AND name IS NOT NULL`,
		`NOT (NOT (a = "\u00e9\x00"))`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		e, err := pred.Parse(text)
		if err != nil {
			if !errors.Is(err, pred.ErrInvalidPredicate) {
				t.Fatalf("untyped parse error: %v", err)
			}
			return
		}
		if err := e.Check(); err != nil {
			t.Fatalf("Parse returned a tree that fails Check: %v", err)
		}
		back, err := pred.Parse(e.String())
		if err != nil || !back.Equal(e) {
			t.Fatalf("%q printed as %q does not parse back: %v", text, e.String(), err)
		}
	})
}

package schema

import "testing"

// TestEdgeRetiredWithoutCardRoundTrips: an edge type that dropped a
// property but keeps the default @card has a contract that decodes (the
// parser took every annotation after the endpoints for @card).
func TestEdgeRetiredWithoutCardRoundTrips(t *testing.T) {
	old := mustParse(t, "node P {}\nedge E: P -> P { s: int64? }\n")
	p, err := Evolve(old, mustParse(t, "node P {}\nedge E: P -> P\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.New.Contract()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(c)
	if err != nil {
		t.Fatalf("contract\n%s\ndoes not decode: %v", c, err)
	}
	if back.String() != p.New.String() {
		t.Fatalf("round trip:\n%s\nwant\n%s", back, p.New)
	}
	for _, text := range []string{"node P {}\nedge E: P -> P @retired(s)\n", "node P {}\nedge E: P -> P @card(0..1) @retired(s)\n"} {
		if _, err := Parse([]byte(text)); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}

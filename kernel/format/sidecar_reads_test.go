package format

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// readsSidecar is a valid one-table sidecar writing "b".
func readsSidecar(reads ...SidecarRead) Sidecar {
	return Sidecar{Op: idN(1), Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: idN(2)}, WriterKind: "txn",
		CommitID: idN(3), Tables: []SidecarTable{{Table: "b", Fork: idN(2), Expected: 1, Commit: 2, Token: strings.Repeat("ab", TokenBytes)}},
		Reads: reads}
}

// TestSidecarReads pins the read expectations of a sidecar: they round-trip;
// a sidecar without reads encodes with no "reads" key at all (byte-identical
// to sidecars written before reads existed); and reads must be valid names,
// sorted and unique, and never name a written table.
func TestSidecarReads(t *testing.T) {
	s := readsSidecar(SidecarRead{Table: "a", Version: 4}, SidecarRead{Table: "c", Version: 0})
	b, err := EncodeSidecar(&s, Token{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := DecodeSidecar(b)
	if err != nil || len(got.Reads) != 2 || got.Reads[0] != s.Reads[0] || got.Reads[1] != s.Reads[1] {
		t.Fatalf("round trip: %+v %v", got.Reads, err)
	}
	none := readsSidecar()
	b, err = EncodeSidecar(&none, Token{})
	if err != nil {
		t.Fatal(err)
	}
	if env, _ := DecodeEnvelope(b); bytes.Contains(env.Payload, []byte(`"reads"`)) {
		t.Fatalf("a sidecar without reads names them: %s", env.Payload)
	}
	for name, reads := range map[string][]SidecarRead{
		"unsorted":     {{Table: "c"}, {Table: "a"}},
		"duplicate":    {{Table: "a"}, {Table: "a", Version: 1}},
		"written":      {{Table: "b"}},
		"invalid name": {{Table: ""}},
	} {
		bad := readsSidecar(reads...)
		if _, err := EncodeSidecar(&bad, Token{}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s reads %+v accepted: %v", name, reads, err)
		}
	}
}

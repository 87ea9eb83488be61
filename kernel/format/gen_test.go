package format

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"

	"pgregory.net/rapid"
)

// Generators of valid objects, shared by the format property tests.

func genName(t *rapid.T, label string) string {
	return rapid.StringMatching(`[A-Za-z0-9_][A-Za-z0-9._-]{0,20}`).Draw(t, label)
}

func genID(t *rapid.T, label string) ID {
	var id ID
	b := rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, label)
	copy(id[:], b)
	if id == (ID{}) {
		id[15] = 1
	}
	return id
}

func genText(t *rapid.T, label string, max int) string {
	return rapid.StringN(0, max, -1).Draw(t, label)
}

func genPins(t *rapid.T) []TablePin {
	names := rapid.SliceOfNDistinct(rapid.StringMatching(`[a-z][a-z0-9_]{0,8}`), 0, 6, rapid.ID[string]).Draw(t, "tables")
	sort.Strings(names)
	var pins []TablePin
	for _, n := range names {
		p := TablePin{Name: n, Fork: genID(t, "fork"), Version: rapid.Uint64Min(1).Draw(t, "v"), Rows: rapid.Uint64().Draw(t, "rows")}
		if rapid.Bool().Draw(t, "named") {
			p.Attempt = genID(t, "attempt")
			if rapid.Bool().Draw(t, "riding") { // format 11: the version rides the pin
				p.Riding = genRiding(t, p)
			}
		}
		pins = append(pins, p)
	}
	return pins
}

// genRiding draws the payload of a version riding pin p (named per
// attempt): p's table, fork, number, attempt and rows, some fragments and
// metadata, based on an earlier version that may ride too.
func genRiding(t *rapid.T, p TablePin) string {
	tv := TableVersion{Table: p.Name, Fork: p.Fork, Version: p.Version, Rows: p.Rows, Attempt: p.Attempt,
		Fragments: rapid.SliceOfN(rapid.StringN(1, 30, -1), 0, 3).Draw(t, "rfrags")}
	if len(tv.Fragments) == 0 {
		tv.Fragments = nil
	}
	if p.Version > 1 && rapid.Bool().Draw(t, "rbased") {
		tv.BasedOn = &TableRef{Fork: genID(t, "rbasefork"), Version: rapid.Uint64Range(1, p.Version-1).Draw(t, "rbasev"),
			Attempt: genID(t, "rbaseattempt"), Rides: rapid.Bool().Draw(t, "rbaserides")}
	}
	payload, err := RidingPayload(&tv)
	if err != nil {
		t.Fatalf("riding payload: %v", err)
	}
	return payload
}

func schemaSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// genManifest draws a valid manifest of any shape: genesis, branch-create,
// ordinary, merge or tombstone.
func genManifest(t *rapid.T) Manifest {
	m := Manifest{
		Branch:      BranchIdentity{Name: genName(t, "branch"), Incarnation: rapid.Uint64Min(1).Draw(t, "inc"), IncarnationID: genID(t, "incid")},
		Tables:      genPins(t),
		Schema:      schemaSum([]byte(genText(t, "schema", 8))),
		FormatStamp: CurrentFormat,
	}
	shape := rapid.SampledFrom([]string{"genesis", "create", "commit", "merge", "tombstone"}).Draw(t, "shape")
	fork := &ForkPoint{Branch: genName(t, "src"), Incarnation: rapid.Uint64Min(1).Draw(t, "srcinc"), IncarnationID: genID(t, "srcid"),
		ManifestVersion: rapid.Uint64().Draw(t, "srcv"), CommitID: genID(t, "forkcommit")}
	c := &Commit{ID: genID(t, "id"), Actor: genText(t, "actor", 12), Message: genText(t, "msg", 40),
		TimeUnixNano: rapid.Int64().Draw(t, "time")}
	switch shape {
	case "genesis":
		c.Kind = KindGenesis
	case "create":
		m.ForkOf, c = fork, nil
		m.Head = fork.CommitID
	default:
		m.Version = rapid.Uint64Min(1).Draw(t, "version")
		if rapid.Bool().Draw(t, "forked") {
			m.ForkOf = fork
		}
		c.Kind = KindCommit
		c.Parents = []ID{genID(t, "parent")}
		if shape == "merge" {
			c.Kind = KindMerge
			c.Parents = append(c.Parents, genID(t, "merged"))
			c.MergedFrom = &ManifestRef{Branch: genName(t, "mbranch"), Incarnation: rapid.Uint64Min(1).Draw(t, "minc"), Version: rapid.Uint64().Draw(t, "mv")}
		}
		if shape == "tombstone" {
			c.Kind, m.Tombstone = KindBranchDelete, true
		}
	}
	if c != nil {
		for _, p := range c.Parents {
			if p == c.ID {
				t.Skip("parent equals commit id")
			}
		}
		if len(c.Parents) == 2 && c.Parents[0] == c.Parents[1] {
			t.Skip("equal merge parents")
		}
		m.Commit, m.Head = c, c.ID
	}
	return m
}

func genTableVersion(t *rapid.T) TableVersion {
	tv := TableVersion{Table: genName(t, "table"), Fork: genID(t, "fork"), Version: rapid.Uint64Range(1, 1<<40).Draw(t, "v"),
		Rows: rapid.Uint64().Draw(t, "rows")}
	tv.Fragments = rapid.SliceOfN(rapid.StringN(1, 30, -1), 0, 5).Draw(t, "frags")
	if len(tv.Fragments) == 0 {
		tv.Fragments = nil
	}
	keys := rapid.SliceOfNDistinct(rapid.StringN(1, 10, -1), 0, 4, rapid.ID[string]).Draw(t, "mdkeys")
	sort.Strings(keys)
	for _, k := range keys {
		tv.Metadata = append(tv.Metadata, KV{Key: k, Value: genText(t, "mdv", 20)})
	}
	if tv.Version > 1 && rapid.Bool().Draw(t, "based") {
		tv.BasedOn = &TableRef{Fork: genID(t, "bfork"), Version: rapid.Uint64Range(1, tv.Version-1).Draw(t, "bv")}
		tv.ContentPreserving = rapid.Bool().Draw(t, "preserving")
	}
	return tv
}

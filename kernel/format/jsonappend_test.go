package format

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// optU64 is v as an optional fixed-width counter: absent when 0 (what the
// mirrors of ReachEntry and CommitIndex carried before jsonappend.go).
func optU64(v uint64) *fixedU64 {
	if v == 0 {
		return nil
	}
	f := fixedU64(v)
	return &f
}

// The reference encodings: what each MarshalJSON returned before the
// hand-written encoders, json.Marshal of the type's fixed-width mirror.
// A mirror's nested values go through their own MarshalJSON, each checked
// against its own reference here, so every level is compared with
// encoding/json.
func refBranchIdentity(v BranchIdentity) ([]byte, error) {
	return json.Marshal(branchIdentityJSON{v.Name, fixedU64(v.Incarnation), v.IncarnationID})
}

func refForkPoint(f ForkPoint) ([]byte, error) {
	return json.Marshal(forkPointJSON{f.Branch, fixedU64(f.Incarnation), f.IncarnationID, fixedU64(f.ManifestVersion), f.CommitID})
}

func refTablePin(p TablePin) ([]byte, error) {
	var riding json.RawMessage
	if p.Riding != "" {
		riding = json.RawMessage(p.Riding)
	}
	return json.Marshal(tablePinJSON{p.Name, p.Fork, fixedU64(p.Version), fixedU64(p.Rows), p.Attempt, riding})
}

func refManifestRef(r ManifestRef) ([]byte, error) {
	return json.Marshal(manifestRefJSON{r.Branch, fixedU64(r.Incarnation), fixedU64(r.Version)})
}

func refManifest(m Manifest) ([]byte, error) {
	return json.Marshal(manifestJSON{fixedU64(m.Version), m.Branch, m.ForkOf, m.Tombstone, m.Tables, m.Commit, m.Head, m.Schema,
		m.FormatStamp, m.Legacy})
}

func refTableRef(r TableRef) ([]byte, error) {
	return json.Marshal(tableRefJSON{r.Fork, fixedU64(r.Version), r.Attempt, r.Rides})
}

func refTableVersion(t TableVersion) ([]byte, error) {
	return json.Marshal(tableVersionJSON{Table: t.Table, Fork: t.Fork, Version: fixedU64(t.Version), Fragments: t.Fragments,
		Rows: fixedU64(t.Rows), Metadata: t.Metadata, BasedOn: t.BasedOn, ContentPreserving: t.ContentPreserving, Attempt: t.Attempt})
}

func refReachEntry(e ReachEntry) ([]byte, error) {
	return json.Marshal(reachEntryJSON{e.Branch, fixedU64(e.Incarnation), fixedU64(e.Version), optU64(e.Gen)})
}

func refCommitIndex(x CommitIndex) ([]byte, error) {
	return json.Marshal(commitIndexJSON{x.ID, x.At, x.Complete, x.Reach, optU64(x.Gen), x.Folds})
}

// hostileStrings need every kind of escape encoding/json makes: quotes,
// backslashes, control bytes, HTML characters, U+2028/9, invalid UTF-8.
var hostileStrings = []string{"", "a", "main", "Person", "data.embed.01JGJFGR48GRTEWC7MGP1KYWD8", "KLUv/WDyIH0mAOpYvA0ygPSk+/=",
	"<script>&amp;", "a\"b\\c", "\x00\x01\x1f\x7f", "del\x7f", "tab\tnew\nline\r", "é日本", "\u2028\u2029", "\xff\xfe", "a\xc3", "\ufffd",
	strings.Repeat("QUJD", 700), "{\"key\":1}", "/slash/", "emoji \U0001F600"}

type encGen struct{ r *rand.Rand }

func (g encGen) str() string {
	if g.r.IntN(4) == 0 { // printable ASCII: the escapes appendString makes itself
		b := make([]byte, g.r.IntN(24))
		for i := range b {
			b[i] = byte(0x20 + g.r.IntN(0x80-0x20))
		}
		return string(b)
	}
	if g.r.IntN(4) == 0 {
		b := make([]byte, g.r.IntN(12))
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		return string(b)
	}
	return hostileStrings[g.r.IntN(len(hostileStrings))]
}

func (g encGen) id() ID {
	var id ID
	switch g.r.IntN(3) {
	case 0: // zero
	case 1:
		for i := range id {
			id[i] = 0xff
		}
	default:
		for i := range id {
			id[i] = byte(g.r.IntN(256))
		}
	}
	return id
}

func (g encGen) u64() uint64 {
	switch g.r.IntN(4) {
	case 0:
		return 0
	case 1:
		return math.MaxUint64
	case 2:
		return uint64(g.r.IntN(100))
	}
	return g.r.Uint64()
}

func (g encGen) manifestRef() ManifestRef { return ManifestRef{g.str(), g.u64(), g.u64()} }

func (g encGen) manifest() Manifest {
	m := Manifest{Version: g.u64(), Branch: BranchIdentity{g.str(), g.u64(), g.id()}, Tombstone: g.r.IntN(2) == 0,
		Head: g.id(), Schema: g.str(), FormatStamp: uint16(g.r.IntN(1 << 16))}
	if g.r.IntN(2) == 0 {
		m.ForkOf = &ForkPoint{g.str(), g.u64(), g.id(), g.u64(), g.id()}
	}
	switch n := g.r.IntN(5); n {
	case 0:
	case 1:
		m.Tables = []TablePin{}
	default:
		for range n {
			m.Tables = append(m.Tables, g.tablePin())
		}
	}
	if g.r.IntN(4) != 0 {
		c := &Commit{ID: g.id(), Actor: g.str(), Message: g.str(), TimeUnixNano: int64(g.u64()), Kind: CommitKind(g.str())}
		for range g.r.IntN(3) {
			c.Parents = append(c.Parents, g.id())
		}
		if g.r.IntN(3) == 0 {
			c.Parents = []ID{}
		}
		if g.r.IntN(2) == 0 {
			r := g.manifestRef()
			c.MergedFrom = &r
		}
		m.Commit = c
	}
	if g.r.IntN(8) == 0 {
		m.Legacy = &LegacyLineage{Head: g.id()}
	}
	return m
}

// tablePin is a random pin; one in three rides with a random version's
// payload (which need not name the pin: the encoders do not check).
func (g encGen) tablePin() TablePin {
	p := TablePin{g.str(), g.id(), g.u64(), g.u64(), g.id(), ""}
	if g.r.IntN(3) == 0 {
		tv := g.tableVersion()
		p.Riding = string(appendTableVersion(nil, &tv))
	}
	return p
}

func (g encGen) tableVersion() TableVersion {
	t := TableVersion{Table: g.str(), Fork: g.id(), Version: g.u64(), Rows: g.u64(), ContentPreserving: g.r.IntN(2) == 0, Attempt: g.id()}
	for range g.r.IntN(4) {
		t.Fragments = append(t.Fragments, g.str())
	}
	if g.r.IntN(4) == 0 {
		t.Fragments = []string{}
	}
	for range g.r.IntN(5) {
		t.Metadata = append(t.Metadata, KV{g.str(), g.str()})
	}
	if g.r.IntN(4) == 0 {
		t.Metadata = []KV{}
	}
	if g.r.IntN(2) == 0 {
		t.BasedOn = &TableRef{g.id(), g.u64(), g.id(), g.r.IntN(2) == 0}
	}
	return t
}

func (g encGen) reach() []ReachEntry {
	var out []ReachEntry
	switch n := g.r.IntN(4); n {
	case 0:
	case 1:
		out = []ReachEntry{}
	default:
		for range n {
			out = append(out, ReachEntry{g.manifestRef(), g.u64()})
		}
	}
	return out
}

func sameEncoding(t *testing.T, what string, i int, got []byte, gotErr error, want []byte, wantErr error) {
	t.Helper()
	if gotErr != nil || wantErr != nil {
		t.Fatalf("%s %d: errors %v / %v", what, i, gotErr, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s %d:\n got %s\nwant %s", what, i, got, want)
	}
}

// TestHandEncodersMatchEncodingJSON: every hand-written encoder of
// jsonappend.go (the MarshalJSON of the manifest, table version, commit
// index and what they hold, and EncodeManifest, EncodeTableVersion and
// EncodeCommitIndex built on them) emits byte for byte what json.Marshal
// of the type's fixed-width mirror emits (the encoding before them), on
// random values with hostile strings, zero and all-ones ids, counters 0
// and MaxUint64, and nil, empty and full slices and pointers.
func TestHandEncodersMatchEncodingJSON(t *testing.T) {
	g := encGen{rand.New(rand.NewPCG(1, 2))}
	for _, s := range hostileStrings {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("string %q: %s, want %s", s, got, want)
		}
	}
	for i := range 3000 {
		bi := BranchIdentity{g.str(), g.u64(), g.id()}
		got, err := bi.MarshalJSON()
		want, werr := refBranchIdentity(bi)
		sameEncoding(t, "branch identity", i, got, err, want, werr)

		fp := ForkPoint{g.str(), g.u64(), g.id(), g.u64(), g.id()}
		got, err = fp.MarshalJSON()
		want, werr = refForkPoint(fp)
		sameEncoding(t, "fork point", i, got, err, want, werr)

		tp := g.tablePin()
		got, err = tp.MarshalJSON()
		want, werr = refTablePin(tp)
		sameEncoding(t, "table pin", i, got, err, want, werr)

		mr := g.manifestRef()
		got, err = mr.MarshalJSON()
		want, werr = refManifestRef(mr)
		sameEncoding(t, "manifest ref", i, got, err, want, werr)

		tr := TableRef{g.id(), g.u64(), g.id(), g.r.IntN(2) == 0}
		got, err = tr.MarshalJSON()
		want, werr = refTableRef(tr)
		sameEncoding(t, "table ref", i, got, err, want, werr)

		re := ReachEntry{g.manifestRef(), g.u64()}
		got, err = re.MarshalJSON()
		want, werr = refReachEntry(re)
		sameEncoding(t, "reach entry", i, got, err, want, werr)

		m := g.manifest()
		got, err = m.MarshalJSON()
		want, werr = refManifest(m)
		sameEncoding(t, "manifest", i, got, err, want, werr)
		got, err = json.Marshal(&m) // as DecodeManifest's canonical check re-encodes
		sameEncoding(t, "manifest via json.Marshal", i, got, err, want, werr)

		tv := g.tableVersion()
		got, err = tv.MarshalJSON()
		want, werr = refTableVersion(tv)
		sameEncoding(t, "table version", i, got, err, want, werr)

		x := CommitIndex{g.id(), g.manifestRef(), g.r.IntN(2) == 0, g.reach(), g.u64(), g.reach()}
		got, err = x.MarshalJSON()
		want, werr = refCommitIndex(x)
		sameEncoding(t, "commit index", i, got, err, want, werr)
	}
}

// TestEncodersFrameTheReference: EncodeManifest, EncodeTableVersion and
// EncodeCommitIndex (payload appended in place, envelopeOf) return exactly
// EncodeEnvelope of the reference payload, on valid generated objects, and
// what they return decodes.
func TestEncodersFrameTheReference(t *testing.T) {
	tok := Token{1, 2, 3}
	rapid.Check(t, func(rt *rapid.T) {
		m := genManifest(rt)
		payload, err := refManifest(m)
		if err != nil {
			rt.Fatal(err)
		}
		got, err := EncodeManifest(&m, tok)
		if err != nil || !bytes.Equal(got, EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindManifest, Token: tok, Payload: payload})) {
			rt.Fatalf("EncodeManifest: %v\n%q\nwant payload %s", err, got, payload)
		}
		if _, _, err := DecodeManifest(got); err != nil {
			rt.Fatal(err)
		}
		tv := genTableVersion(rt)
		if payload, err = refTableVersion(tv); err != nil {
			rt.Fatal(err)
		}
		got, err = EncodeTableVersion(&tv, tok)
		if err != nil || !bytes.Equal(got, EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindTableVersion, Token: tok, Payload: payload})) {
			rt.Fatalf("EncodeTableVersion: %v\n%q\nwant payload %s", err, got, payload)
		}
		if _, _, err := DecodeTableVersion(got); err != nil {
			rt.Fatal(err)
		}
	})
	x := CommitIndex{ID: ID{7}, At: ManifestRef{"main", 1, 9}, Complete: true, Reach: []ReachEntry{{ManifestRef{"main", 1, 9}, 4}}, Gen: 4,
		Folds: []ReachEntry{{ManifestRef{"dev", 2, 3}, 2}}}
	payload, err := refCommitIndex(x)
	if err != nil {
		t.Fatal(err)
	}
	got, err := EncodeCommitIndex(&x, tok)
	sameEncoding(t, "EncodeCommitIndex", 0, got, err, EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindCommitIndex, Token: tok, Payload: payload}), nil)
	if _, _, err := DecodeCommitIndex(got); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkEncodeCommitObjects encodes a warm one-row commit's table
// version (five inline infos, four embedded fragments of 1-2.5 KiB base64,
// an id delta) and manifest (five pins, a commit) with the hand-written
// encoders (hand) and with json.Marshal of the mirrors as before them
// (mirror), side by side; it reports each side's ns per encoding.
func BenchmarkEncodeCommitObjects(b *testing.B) {
	tv := TableVersion{Table: "Person", Fork: ID{1}, Version: 1500, Rows: 1520, BasedOn: &TableRef{Fork: ID{1}, Version: 1499, Attempt: ID{3}}, Attempt: ID{4}}
	for i := range 5 {
		name := "01JGJFGR48GRTEWC7MGP1KYWD" + string(rune('0'+i))
		tv.Fragments = append(tv.Fragments, name)
		tv.Metadata = append(tv.Metadata, KV{"data.fragment." + name, `{"rows":128,"bytes":1241,"crc32c":1573417113,"min":"bench-000001276","max":"bench-000001403","stats":[{"col":"name","nulls":0,"lo":"n","hi":"n"},{"col":"age","nulls":128},{"col":"score","nulls":128},{"col":"at","nulls":128}]}`})
		if i > 0 {
			tv.Metadata = append(tv.Metadata, KV{"data.embed." + name, strings.Repeat("KLUv/WDyIH0mAOpY", 40*i)})
		}
	}
	tv.Metadata = append(tv.Metadata, KV{"data.iddelta", `["bench-000001485","bench-000001486","bench-000001487"]`})
	slices.SortFunc(tv.Metadata, func(a, b KV) int { return strings.Compare(a.Key, b.Key) })
	m := Manifest{Version: 1500, Branch: BranchIdentity{"main", 1, ID{9}}, Head: ID{8}, Schema: strings.Repeat("ab", 32), FormatStamp: CurrentFormat,
		Commit: &Commit{ID: ID{8}, Parents: []ID{{7}}, Actor: "bench", TimeUnixNano: 1, Kind: KindCommit}}
	for _, n := range []string{"Company", "Knows", "Person", "Reports", "WorksAt"} {
		m.Tables = append(m.Tables, TablePin{Name: n, Fork: ID{1}, Version: 1500, Rows: 1520, Attempt: ID{4}})
	}
	if _, err := EncodeTableVersion(&tv, Token{}); err != nil {
		b.Fatal(err)
	}
	if _, err := EncodeManifest(&m, Token{}); err != nil {
		b.Fatal(err)
	}
	for _, side := range []string{"hand", "mirror"} {
		b.Run(side, func(b *testing.B) {
			for b.Loop() {
				if side == "hand" {
					_, _ = EncodeTableVersion(&tv, Token{})
					_, _ = EncodeManifest(&m, Token{})
					continue
				}
				p, _ := refTableVersion(tv)
				_ = EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindTableVersion, Payload: p})
				p, _ = refManifest(m)
				_ = EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindManifest, Payload: p})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/commit-objects")
		})
	}
}

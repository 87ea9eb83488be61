package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/oklog/ulid/v2"
)

// runVerifyJSON runs verify --json and returns its exit status and report.
func (f *fixture) verify() (int, verifyReport) {
	f.t.Helper()
	code, out, errs := f.run("verify", f.spec, testRoot, "--json")
	var r verifyReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		f.t.Fatalf("verify: exit %d, output not JSON: %v\n%s\n%s", code, err, out, errs)
	}
	return code, r
}

// hasProblem reports whether r names key with rule.
func hasProblem(r verifyReport, key, rule string) bool {
	for _, p := range r.Problems {
		if p.Key == key && p.Rule == rule {
			return true
		}
	}
	return false
}

// TestVerifyCleanGraphZeroWrites: a sound graph verifies with exit 0, every
// object reachable is counted, and verify makes no write at all.
func TestVerifyCleanGraphZeroWrites(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			f.buildGraph()
			before := f.store.Counts()
			code, r := f.verify()
			if code != 0 || len(r.Problems) != 0 {
				t.Fatalf("clean graph: exit %d, problems %+v, notes %v", code, r.Problems, r.Notes)
			}
			// main v0..v3 and feature v0..v1.
			if r.Manifests != 6 || len(r.LiveBranches) != 2 || r.TableVersions == 0 || r.Fragments == 0 || r.RowsChecked != 2*(4+1+1+2) {
				t.Fatalf("coverage: %+v", r)
			}
			after := f.store.Counts()
			if after.Writes() != before.Writes() {
				t.Fatalf("verify wrote %d objects (puts or deletes)", after.Writes()-before.Writes())
			}
			if out := f.mustRun(0, "verify", f.spec, testRoot); !strings.Contains(out, "ok: no problems") {
				t.Fatalf("verify text:\n%s", out)
			}
		})
	}
}

// damageKeys finds the objects the damage test breaks.
type damageKeys struct {
	m1, m2, head string // main manifests v1, v2 and the head (v3)
	tv           string // the Person table version main's head pins
	frag         string // a fragment of that version
	index        string // the commit index of main v1's commit
	marker       string // the fork marker of feature#1
	adjChunk     string // the first out-chunk of the Knows version main's head pins
	adjPage      string // that chunk's first page
	idPage       string // the first page of the first id chunk of that Person version
}

func (f *fixture) damageKeys(g *data.Graph) damageKeys {
	f.t.Helper()
	ctx := context.Background()
	keys := format.NewKeys(testRoot)
	main, _ := g.Branch(ctx, "main")
	s, err := g.SnapshotAt(ctx, main)
	if err != nil {
		f.t.Fatal(err)
	}
	p, _ := s.Kernel().Table("Person")
	tv, err := g.Kernel().ReadPinned(ctx, p)
	if err != nil {
		f.t.Fatal(err)
	}
	id, err := ulid.ParseStrict(tv.Fragments[0])
	if err != nil {
		f.t.Fatal(err)
	}
	chunk, page := f.adjKeys(g, s.Kernel(), keys, "Knows", "data.adj.out")
	_, idPage := f.adjKeys(g, s.Kernel(), keys, "Person", "data.adj.id")
	return damageKeys{m1: keys.Manifest("main", 1, 1), m2: keys.Manifest("main", 1, 2), head: keys.Manifest("main", 1, 3),
		tv: keys.TableVersionRef("Person", p.Ref()), frag: keys.Data("Person", id),
		index:  keys.CommitIndex(f.readManifest(keys.Manifest("main", 1, 1)).Commit.ID),
		marker: f.forkMarkerKey(keys), adjChunk: chunk, adjPage: page, idPage: idPage}
}

// adjKeys returns the keys of the first chunk the version of table s pins
// lists under metadata key md (data.adj.out, data.adj.id, ...) and of that
// chunk's first page.
func (f *fixture) adjKeys(g *data.Graph, s kernel.Snapshot, keys format.Keys, table, md string) (string, string) {
	f.t.Helper()
	ctx := context.Background()
	p, _ := s.Table(table)
	tv, err := g.Kernel().ReadPinned(ctx, p)
	if err != nil {
		f.t.Fatal(err)
	}
	var chunks []adjRefJSON
	for _, kv := range tv.Metadata {
		if kv.Key == md {
			if err := json.Unmarshal([]byte(kv.Value), &chunks); err != nil {
				f.t.Fatal(err)
			}
		}
	}
	if len(chunks) == 0 {
		f.t.Fatalf("%s has no %s index", table, md)
	}
	chunkKey := keys.Adjacency(table, ulid.MustParseStrict(chunks[0].Name))
	o, err := f.store.Inner().Get(ctx, chunkKey)
	if err != nil {
		f.t.Fatal(err)
	}
	names, _, err := data.AdjacencyChunkEntries(o.Data)
	if err != nil || len(names) == 0 {
		f.t.Fatalf("chunk %s: %d entries, %v", chunkKey, len(names), err)
	}
	return chunkKey, keys.Adjacency(table, ulid.MustParseStrict(names[0]))
}

// TestVerifyNamesEachDamage damages one object at a time and asserts that
// verify exits 1 naming the damaged key and the rule it breaks.
func TestVerifyNamesEachDamage(t *testing.T) {
	ctx := context.Background()
	type damage struct {
		name  string
		apply func(f *fixture, k damageKeys)
		want  func(k damageKeys) [][2]string // key, rule
	}
	get := func(f *fixture, key string) []byte {
		o, err := f.store.Inner().Get(ctx, key)
		if err != nil {
			f.t.Fatal(err)
		}
		return o.Data
	}
	put := func(f *fixture, key string, b []byte) {
		if _, err := f.store.Inner().Put(ctx, key, b, objstore.Unconditional); err != nil {
			f.t.Fatal(err)
		}
	}
	flip := func(b []byte, i int) []byte { b = append([]byte(nil), b...); b[i] ^= 0x40; return b }
	cases := []damage{
		{"flip-manifest-byte", func(f *fixture, k damageKeys) { b := get(f, k.m1); put(f, k.m1, flip(b, len(b)/2)) },
			func(k damageKeys) [][2]string { return [][2]string{{k.m1, ruleEnvelope}} }},
		{"flip-head-manifest-byte", func(f *fixture, k damageKeys) { b := get(f, k.head); put(f, k.head, flip(b, 40)) },
			func(k damageKeys) [][2]string { return [][2]string{{k.head, ruleEnvelope}} }},
		{"truncate-table-version", func(f *fixture, k damageKeys) { b := get(f, k.tv); put(f, k.tv, b[:len(b)-7]) },
			func(k damageKeys) [][2]string { return [][2]string{{k.tv, ruleEnvelope}} }},
		// The riding counterpart: a sound envelope whose Person pin's
		// payload names other rows than the pin (a buggy writer).
		{"riding-payload-mismatch", func(f *fixture, k damageKeys) {
			m := f.readManifest(k.head)
			for i := range m.Tables {
				if m.Tables[i].Name == "Person" {
					if m.Tables[i].Riding == "" {
						f.t.Fatalf("main's head pins Person as an object")
					}
					m.Tables[i].Rows++
				}
			}
			payload, err := json.Marshal(&m)
			if err != nil {
				f.t.Fatal(err)
			}
			put(f, k.head, format.EncodeEnvelope(format.Envelope{Stamp: format.CurrentFormat, Kind: format.KindManifest, Token: format.Token{1}, Payload: payload}))
		}, func(k damageKeys) [][2]string { return [][2]string{{k.head, ruleDecode}} }},
		{"delete-fragment", func(f *fixture, k damageKeys) {
			if err := f.store.Inner().Delete(ctx, k.frag); err != nil {
				f.t.Fatal(err)
			}
		}, func(k damageKeys) [][2]string { return [][2]string{{k.frag, ruleMissing}} }},
		{"flip-fragment-byte", func(f *fixture, k damageKeys) { b := get(f, k.frag); put(f, k.frag, flip(b, len(b)/2)) },
			func(k damageKeys) [][2]string { return [][2]string{{k.frag, ruleFragment}} }},
		{"rewrite-first-parent", func(f *fixture, k damageKeys) {
			parent := f.readManifest(k.m1).Commit.Parents[0] // skip main v1's commit
			f.rewriteManifest(k.m2, func(m *format.Manifest) { m.Commit.Parents[0] = parent })
		}, func(k damageKeys) [][2]string { return [][2]string{{k.m2, ruleChain}} }},
		{"pin-goes-backwards", func(f *fixture, k damageKeys) {
			m1 := f.readManifest(k.m1)
			f.rewriteManifest(k.head, func(m *format.Manifest) {
				p, _ := m1.Pin("Person")
				for i := range m.Tables {
					if m.Tables[i].Name == "Person" {
						m.Tables[i] = p
					}
				}
			})
		}, func(k damageKeys) [][2]string { return [][2]string{{k.head, ruleChain}} }},
		{"flip-commit-index-byte", func(f *fixture, k damageKeys) { b := get(f, k.index); put(f, k.index, flip(b, len(b)/2)) },
			func(k damageKeys) [][2]string { return [][2]string{{k.index, ruleCommitIndex}} }},
		{"delete-fork-marker", func(f *fixture, k damageKeys) {
			if err := f.store.Inner().Delete(ctx, k.marker); err != nil {
				f.t.Fatal(err)
			}
		}, func(k damageKeys) [][2]string { return [][2]string{{k.marker, ruleForkIndex}} }},
		{"flip-adjacency-chunk-byte", func(f *fixture, k damageKeys) { b := get(f, k.adjChunk); put(f, k.adjChunk, flip(b, len(b)/2)) },
			func(k damageKeys) [][2]string { return [][2]string{{k.adjChunk, ruleAdjacency}} }},
		{"flip-adjacency-page-byte", func(f *fixture, k damageKeys) { b := get(f, k.adjPage); put(f, k.adjPage, flip(b, len(b)/2)) },
			func(k damageKeys) [][2]string { return [][2]string{{k.adjPage, ruleAdjacency}} }},
		{"flip-id-page-byte", func(f *fixture, k damageKeys) { b := get(f, k.idPage); put(f, k.idPage, flip(b, len(b)/2)) },
			func(k damageKeys) [][2]string { return [][2]string{{k.idPage, ruleAdjacency}} }},
		{"delete-adjacency-page", func(f *fixture, k damageKeys) {
			if err := f.store.Inner().Delete(ctx, k.adjPage); err != nil {
				f.t.Fatal(err)
			}
		}, func(k damageKeys) [][2]string { return [][2]string{{k.adjPage, ruleMissing}} }},
		{"swap-manifests", func(f *fixture, k damageKeys) {
			b1, b2 := get(f, k.m1), get(f, k.m2)
			put(f, k.m1, b2)
			put(f, k.m2, b1)
		},
			func(k damageKeys) [][2]string { return [][2]string{{k.m1, ruleLocation}, {k.m2, ruleLocation}} }},
	}
	// Every damage on sim; on fs (slower: every write is fsynced) the
	// kinds that reach the store differently: bytes, a missing file, keys.
	onFS := map[string]bool{"flip-fragment-byte": true, "delete-fragment": true, "swap-manifests": true}
	// The damages to a table version object: written with versions as
	// objects (format 10's way); every other damage on a history whose
	// versions ride their manifests.
	asObjects := map[string]bool{"truncate-table-version": true}
	for _, be := range backends {
		for _, c := range cases {
			if be == "fs" && !onFS[c.name] {
				continue
			}
			t.Run(be+"/"+c.name, func(t *testing.T) {
				f := newFixture(t, be)
				f.objects = true // damages fragment objects
				f.versions = asObjects[c.name]
				k := f.damageKeys(f.buildGraph())
				c.apply(f, k)
				before := f.store.Counts()
				code, r := f.verify()
				if code != 1 {
					t.Fatalf("exit %d, want 1; problems %+v", code, r.Problems)
				}
				for _, w := range c.want(k) {
					if !hasProblem(r, w[0], w[1]) {
						t.Errorf("no %s problem at %s; got %+v", w[1], w[0], r.Problems)
					}
				}
				if after := f.store.Counts(); after.Writes() != before.Writes() {
					t.Fatalf("verify wrote %d objects", after.Writes()-before.Writes())
				}
			})
		}
	}
}

// TestVerifyDataRules publishes table versions that break the data-plane
// rules (as a buggy writer could, through the kernel's raw table API) and
// asserts verify names each: a dangling edge, an id in two fragments, and a
// source node over its @card.
func TestVerifyDataRules(t *testing.T) {
	f := newFixture(t, "sim")
	g := f.buildGraph()
	ctx := context.Background()
	k := g.Kernel()
	main, _ := k.Branch(ctx, "main")
	s, _ := g.SnapshotAt(ctx, main)
	keys := format.NewKeys(testRoot)
	var updates []kernel.TableUpdate
	var fragKeys []string
	raw := func(typ string, frags ...[][3]string) {
		tbl, err := s.Table(typ)
		if err != nil {
			t.Fatal(err)
		}
		content := kernel.TableContent{Metadata: map[string]string{"data.format": "1"}}
		for _, rows := range frags {
			name := ulid.MustNew(ulid.Now(), f.env.Entropy)
			b, info := edgeFragment(t, tbl, rows)
			key := keys.Data(typ, name)
			if _, err := f.store.Put(ctx, key, b, objstore.CreateOnly); err != nil {
				t.Fatal(err)
			}
			fragKeys = append(fragKeys, key)
			info.Name = name.String()
			mi, _ := json.Marshal(info)
			content.Fragments = append(content.Fragments, info.Name)
			content.Metadata["data.fragment."+info.Name] = string(mi)
			content.Rows += info.Rows
		}
		p, _ := s.Kernel().Table(typ)
		u, err := k.CommitTableVersion(ctx, main, typ, content, p.Ref())
		if err != nil {
			t.Fatal(err)
		}
		updates = append(updates, u)
	}
	raw("Knows", [][3]string{{"k1", "p1", "p2"}, {"k5", "p1", "ghost"}}, [][3]string{{"k1", "p2", "p3"}})
	raw("WorksAt", [][3]string{{"w1", "p1", "c1"}, {"w2", "p1", "c1"}})
	if _, err := k.Publish(ctx, main, updates, kernel.LineageIntent{Actor: "buggy"}, nil); err != nil {
		t.Fatal(err)
	}
	head := keys.Manifest("main", 1, 4)
	code, r := f.verify()
	if code != 1 {
		t.Fatalf("exit %d, problems %+v", code, r.Problems)
	}
	for _, w := range [][2]string{{fragKeys[0], ruleDangling}, {fragKeys[1], ruleDuplicateID}, {head, ruleCard}} {
		if !hasProblem(r, w[0], w[1]) {
			t.Errorf("no %s problem at %s; got %+v", w[1], w[0], r.Problems)
		}
	}
}

// edgeFragment encodes edge rows (id, from, to) as one fragment of tbl.
func edgeFragment(t *testing.T, tbl *data.Table, rows [][3]string) ([]byte, data.FragmentInfo) {
	t.Helper()
	bld := array.NewRecordBuilder(memory.DefaultAllocator, tbl.Schema())
	defer bld.Release()
	for _, r := range rows {
		for c := 0; c < 3; c++ {
			bld.Field(c).(*array.StringBuilder).Append(r[c])
		}
		for c := 3; c < len(tbl.Schema().Fields()); c++ {
			bld.Field(c).AppendNull()
		}
	}
	rec := bld.NewRecord()
	defer rec.Release()
	b, info, err := data.EncodeFragment(tbl, rec)
	if err != nil {
		t.Fatal(err)
	}
	return b, info
}

func (f *fixture) readManifest(key string) format.Manifest {
	f.t.Helper()
	o, err := f.store.Inner().Get(context.Background(), key)
	if err != nil {
		f.t.Fatal(err)
	}
	m, _, err := format.DecodeManifest(o.Data)
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

// rewriteManifest replaces the manifest at key by a well-formed one that
// edit changed (a buggy writer, not bit rot: envelope and CRC are sound).
func (f *fixture) rewriteManifest(key string, edit func(m *format.Manifest)) {
	f.t.Helper()
	m := f.readManifest(key)
	edit(&m)
	b, err := format.EncodeManifest(&m, format.Token{1})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.store.Inner().Put(context.Background(), key, b, objstore.Unconditional); err != nil {
		f.t.Fatal(err)
	}
}

// forkMarkerKey is the fork marker key of feature#1.
func (f *fixture) forkMarkerKey(keys format.Keys) string {
	f.t.Helper()
	m := f.readManifest(keys.Manifest("feature", 1, 0))
	return keys.ForkMarker(m.ForkOf.IncarnationID, "feature", m.Branch.IncarnationID)
}

// TestVerifyIndexMatchesRows damages an index without breaking any
// checksum: a table version of Knows whose fragment holds new rows but
// whose metadata names the previous version's indexes (sound objects
// listing the old rows). verify must name the version under rule
// adjacency for each of its three indexes (out, in, id), from the
// multiset hashes of the index entries and of the fragments' rows.
func TestVerifyIndexMatchesRows(t *testing.T) {
	f := newFixture(t, "sim")
	g := f.buildGraph()
	ctx := context.Background()
	k := g.Kernel()
	main, _ := k.Branch(ctx, "main")
	s, _ := g.SnapshotAt(ctx, main)
	keys := format.NewKeys(testRoot)
	tbl, err := s.Table("Knows")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Kernel().Table("Knows")
	old, err := k.ReadPinned(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	content := kernel.TableContent{Metadata: map[string]string{"data.format": "1"}}
	for _, kv := range old.Metadata {
		if strings.HasPrefix(kv.Key, "data.adj.") {
			content.Metadata[kv.Key] = kv.Value
		}
	}
	b, info := edgeFragment(t, tbl, [][3]string{{"kzz8", "p1", "p2"}, {"kzz9", "p2", "p3"}})
	name := ulid.MustNew(ulid.Now(), f.env.Entropy)
	if _, err := f.store.Put(ctx, keys.Data("Knows", name), b, objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	info.Name = name.String()
	mi, _ := json.Marshal(info)
	content.Fragments = []string{info.Name}
	content.Metadata["data.fragment."+info.Name] = string(mi)
	content.Rows = info.Rows
	u, err := k.CommitTableVersion(ctx, main, "Knows", content, p.Ref())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Publish(ctx, main, []kernel.TableUpdate{u}, kernel.LineageIntent{Actor: "buggy"}, nil); err != nil {
		t.Fatal(err)
	}
	code, r := f.verify()
	tvKey := keys.TableVersion("Knows", p.Fork, p.Version+1)
	n := 0
	for _, pr := range r.Problems {
		if pr.Key == tvKey && pr.Rule == ruleAdjacency && strings.Contains(pr.Detail, "not the 2 rows of the fragments") {
			n++
		}
	}
	if code != 1 || n != 3 {
		t.Fatalf("exit %d, %d index-vs-rows problems at %s (want 3: out, in, id); problems %+v", code, n, tvKey, r.Problems)
	}
}

package data

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// headVersion returns the table version main's head pins for typ.
func headVersion(t *testing.T, g *Graph, typ string) kernel.TableVersion {
	t.Helper()
	s := snap(t, g)
	tab, err := s.Table(typ)
	must(t, err)
	tv, err := g.k.ReadPinned(ctx, pinOf(s.ks, tab))
	must(t, err)
	return tv
}

// objectKeys returns the fragment objects of table typ on st.
func objectKeys(st *sim.Store, typ string) map[string]bool {
	out := map[string]bool{}
	for _, k := range st.Keys(testRoot + "/data/" + typ + "/") {
		out[k[strings.LastIndex(k, "/")+1:]] = true
	}
	return out
}

// TestEmbeddedFragmentsRideTheVersion: one-row commits embed their
// fragment in the table version (format 9): no object exists for it, a
// cold handle reads every row from the version alone, updates and deletes
// of embedded rows work, a bulk insert's fragment is an object beside the
// embedded ones, and a compaction folds the embedded fragments into an
// object. Every version stays within MaxEmbeddedBytes. Red without the
// embedding (every fragment an object) and without the reader's embedded
// path (the cold reads meet missing objects: ErrReclaimed).
func TestEmbeddedFragmentsRideTheVersion(t *testing.T) {
	for _, paged := range []bool{false, true} {
		t.Run(fmt.Sprintf("paged=%v", paged), func(t *testing.T) {
			if paged {
				pagedHandles(t)
			}
			st := sim.New(sim.Config{Seed: 1})
			g := initGraph(t, st, Limits{})
			seedGraph(t, g)
			for i := range 40 {
				commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", person(fmt.Sprintf("e-%03d", i), "n")) })
				tv := headVersion(t, g, "Person")
				e, err := EmbeddedFragments(tv)
				must(t, err)
				total := 0
				for name, b := range e {
					total += len(b)
					if objectKeys(st, "Person")[name] {
						t.Fatalf("commit %d: fragment %s is embedded and an object", i, name)
					}
				}
				if len(e) == 0 || total > MaxEmbeddedBytes {
					t.Fatalf("commit %d: %d embedded fragments, %d bytes (bound %d)", i, len(e), total, MaxEmbeddedBytes)
				}
			}
			commitTx(t, g, func(tx *Txn) error { return tx.Update("Person", person("e-007", "u")) })
			commitTx(t, g, func(tx *Txn) error { return tx.Delete("Person", "e-011") })
			commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", manyPeople(300)...) })
			cold := openGraph(t, st, 9)
			s := snap(t, cold)
			for i := range 40 {
				id := fmt.Sprintf("e-%03d", i)
				r, ok, err := s.Get(ctx, "Person", id)
				if err != nil || ok != (i != 11) || (i == 7 && r.Props["name"] != "u") {
					t.Fatalf("cold Get %s: %v %v %v", id, r, ok, err)
				}
			}
			n, err := s.Count(ctx, "Person")
			must(t, err)
			if want := uint64(39 + 300 + len(baseGraph()["Person"])); n != want {
				t.Fatalf("count %d, want %d", n, want)
			}
			if len(objectKeys(st, "Person")) == 0 {
				t.Fatal("the 300-row insert wrote no fragment object")
			}
			if _, err := cold.Compact(ctx, mainRef(t, cold), compact.Policy{}); err != nil {
				t.Fatal(err)
			}
			after := headVersion(t, cold, "Person")
			e, err := EmbeddedFragments(after)
			must(t, err)
			if len(e) != 0 {
				t.Fatalf("after compaction %d fragments still embedded", len(e))
			}
			if n, err := snap(t, openGraph(t, st, 10)).Count(ctx, "Person"); err != nil || n != uint64(39+300+len(baseGraph()["Person"])) {
				t.Fatalf("count after compaction %d %v", n, err)
			}
		})
	}
}

// TestCorruptEmbedIsTyped: a table version whose embedded bytes are
// damaged, unbounded, or name a fragment it does not list is refused with
// a typed error (format.ErrCorrupt at the version, ErrCorruptFragment at
// the fragment's read), never decoded as rows.
func TestCorruptEmbedIsTyped(t *testing.T) {
	for _, paged := range []bool{false, true} {
		t.Run(fmt.Sprintf("paged=%v", paged), func(t *testing.T) {
			if paged {
				pagedHandles(t)
			}
			corruptEmbeds(t)
		})
	}
}

// corruptEmbeds is TestCorruptEmbedIsTyped on the helpers' handles.
func corruptEmbeds(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, st, Limits{})
	seedGraph(t, g)
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", person("e-1", "n")) })
	tv := headVersion(t, g, "Person")
	s := snap(t, g)
	tab, err := s.Table("Person")
	must(t, err)
	var name string
	for _, kv := range tv.Metadata {
		if n, ok := strings.CutPrefix(kv.Key, metaEmbedPrefix); ok {
			name = n
		}
	}
	if name == "" {
		t.Fatal("no embedded fragment to damage")
	}
	stranger, err := g.mintName()
	must(t, err)
	edit := func(f func(md map[string]string)) kernel.TableVersion {
		md := map[string]string{}
		for _, kv := range tv.Metadata {
			md[kv.Key] = kv.Value
		}
		f(md)
		out := tv
		out.Metadata = sortedKV(md)
		return out
	}
	flipped := func(md map[string]string) {
		b, _ := base64.StdEncoding.DecodeString(md[metaEmbedPrefix+name])
		b[len(b)/2] ^= 1
		md[metaEmbedPrefix+name] = base64.StdEncoding.EncodeToString(b)
	}
	cases := []struct {
		name string
		edit func(md map[string]string)
		want error
	}{
		{"names a fragment not listed", func(md map[string]string) { md[metaEmbedPrefix+stranger.String()] = md[metaEmbedPrefix+name] }, format.ErrCorrupt},
		{"not base64", func(md map[string]string) { md[metaEmbedPrefix+name] = "!!" + md[metaEmbedPrefix+name] }, format.ErrCorrupt},
		{"name not a ULID", func(md map[string]string) { md[metaEmbedPrefix+"x"] = md[metaEmbedPrefix+name] }, format.ErrCorrupt},
		{"too large", func(md map[string]string) {
			md[metaEmbedPrefix+name] = base64.StdEncoding.EncodeToString(make([]byte, MaxEmbeddedFragmentBytes+1))
		}, format.ErrCorrupt},
		{"a byte flipped", flipped, ErrCorruptFragment},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newReader(g, s.cat)
			v, err := r.viewOf(tab, edit(c.edit))
			if err == nil {
				g.cache = newFragCache(-1)
				err = r.loadAll(ctx, v)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

// sortedKV is md as sorted table-version metadata.
func sortedKV(md map[string]string) []format.KV {
	out := make([]format.KV, 0, len(md))
	for k, v := range md { //detlint:ordered sorted below
		out = append(out, format.KV{Key: k, Value: v})
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j-1].Key > out[j].Key; j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

// TestFormat8GraphOpensAndEmbeds: a graph written by format 8 (every
// fragment an object) opens read-write without a write, reads whole, and
// its next small commit stamps 9 and embeds its fragment beside the old
// objects, which stay as they are.
func TestFormat8GraphOpensAndEmbeds(t *testing.T) {
	defaultFragmentShapes(t, "a format-8 fixture restamped (fragment chunks not re-summed)")
	versionsAsObjects(t) // a fixture of a format before 11: no version rides
	st := sim.New(sim.Config{Seed: 1})
	objectFragments(t)
	g := initGraph(t, st, Limits{})
	seedGraph(t, g)
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", person("old-1", "n")) })
	testObjectFragments = false
	restampTo(t, st, format.FormatV8)
	objects := objectKeys(st, "Person")
	headKey := func() string { return st.Keys(testRoot + "/branches/main/")[0] }
	before := headKey()
	p := openGraph(t, st, 2)
	if headKey() != before {
		t.Fatalf("a read-write open of a format-8 graph wrote manifest %s", headKey())
	}
	if _, ok, err := snap(t, p).Get(ctx, "Person", "old-1"); err != nil || !ok {
		t.Fatalf("Get on the format-8 graph: %v %v", ok, err)
	}
	commitTx(t, p, func(tx *Txn) error { return tx.Insert("Person", person("new-1", "n")) })
	obj, err := st.Get(ctx, headKey())
	must(t, err)
	m, _, err := format.DecodeManifest(obj.Data)
	must(t, err)
	if m.FormatStamp != format.CurrentFormat || format.CurrentFormat < FormatEmbeddedFragments {
		t.Fatalf("publish after the open stamped %d, want %d", m.FormatStamp, format.CurrentFormat)
	}
	e, err := EmbeddedFragments(headVersion(t, p, "Person"))
	must(t, err)
	if len(e) == 0 {
		t.Fatal("the format-9 commit embedded nothing")
	}
	for k := range objects {
		if !objectKeys(st, "Person")[k] {
			t.Fatalf("format-8 fragment %s vanished", k)
		}
	}
	s := snap(t, openGraph(t, st, 3))
	for _, id := range []string{"old-1", "new-1"} {
		if _, ok, err := s.Get(ctx, "Person", id); err != nil || !ok {
			t.Fatalf("cold Get %s: %v %v", id, ok, err)
		}
	}
}

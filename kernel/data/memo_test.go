package data

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// memoVersion is the Person table version of a graph of a few single-row
// commits (inline infos, embedded fragments), and the table.
func memoVersion(t *testing.T) (*Graph, *Table, kernel.TableVersion) {
	t.Helper()
	if testPaged || *pagedAll || testObjectFragments {
		t.Skip("needs inline infos and embedded fragments")
	}
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	insertPeople(t, g, 0, 7)
	tv := pinnedVersion(t, g, "Person")
	cat, err := g.catalog(ctx, snap(t, g).ks.SchemaHash())
	must(t, err)
	tb, err := cat.table("Person")
	must(t, err)
	return g, tb, tv
}

// withMeta returns tv with metadata key set to value (added when absent).
func withMeta(tv kernel.TableVersion, key, value string) kernel.TableVersion {
	md := append([]format.KV(nil), tv.Metadata...)
	for i := range md {
		if md[i].Key == key {
			md[i].Value = value
			tv.Metadata = md
			return tv
		}
	}
	tv.Metadata = append(md, format.KV{Key: key, Value: value})
	return tv
}

// TestCodecMemoAnswersAsTheParse: a view read through the handle's memo
// (first parsing, then remembering) holds exactly the infos, statistics
// and embedded bytes a parse without it holds, and a table version's
// embeds re-encode to the very same text through it.
func TestCodecMemoAnswersAsTheParse(t *testing.T) {
	g, tb, tv := memoVersion(t)
	memo := newCodecMemo()
	want, wantStats, err := fragmentInfos(tb, tv, nil, nil)
	must(t, err)
	md := map[string]string{}
	for _, kv := range tv.Metadata {
		md[kv.Key] = kv.Value
	}
	wantEmbeds, err := parseEmbeds(md, nil)
	must(t, err)
	if len(want) < 2 || len(wantEmbeds) == 0 {
		t.Fatalf("fixture: %d fragments, %d embedded; want several, some embedded", len(want), len(wantEmbeds))
	}
	for pass := 0; pass < 2; pass++ {
		got, gotStats, err := fragmentInfos(tb, tv, nil, memo)
		must(t, err)
		if d := cmp.Diff(want, got, cmp.AllowUnexported(FragmentInfo{})); d != "" {
			t.Fatalf("pass %d: memo infos differ from the parse (-parse +memo):\n%s", pass, d)
		}
		if d := cmp.Diff(wantStats, gotStats); d != "" {
			t.Fatalf("pass %d: memo stats differ from the parse (-parse +memo):\n%s", pass, d)
		}
		embeds, err := parseEmbeds(md, memo)
		must(t, err)
		if d := cmp.Diff(wantEmbeds, embeds); d != "" {
			t.Fatalf("pass %d: memo embeds differ from the parse (-parse +memo):\n%s", pass, d)
		}
		attachEmbeds(got, embeds)
		out := map[string]string{}
		addEmbeds(out, got, memo)
		for k, v := range out {
			if md[k] != v {
				t.Fatalf("pass %d: %s re-encodes to %.40q..., the version holds %.40q...", pass, k, v, md[k])
			}
		}
	}
	if len(memo.infos) != len(want) || len(memo.b64dec) != len(wantEmbeds) || len(memo.b64enc) != len(wantEmbeds) {
		t.Fatalf("memo holds %d infos, %d decodes, %d encodes; want %d, %d, %d", len(memo.infos), len(memo.b64dec), len(memo.b64enc), len(want), len(wantEmbeds), len(wantEmbeds))
	}
	// The handle's own reads go through its memo.
	if _, err := newReader(g, nil).viewOf(tb, tv); err != nil {
		t.Fatal(err)
	}
	if len(g.memo.infos) == 0 || len(g.memo.b64dec) == 0 {
		t.Fatalf("the handle's view read left its memo empty (%d infos, %d embeds)", len(g.memo.infos), len(g.memo.b64dec))
	}
}

// TestCodecMemoStillRefuses: what the memo remembers never lets a corrupt
// version through: an info it parsed before, listed under a name that is
// not a ULID, or checked against another table, and embedded text it
// decoded before, listed under a bad name, are refused with
// format.ErrCorrupt as without the memo; a refused input is not
// remembered.
func TestCodecMemoStillRefuses(t *testing.T) {
	g, tb, tv := memoVersion(t)
	memo := newCodecMemo()
	if _, _, err := fragmentInfos(tb, tv, nil, memo); err != nil {
		t.Fatal(err)
	}
	name := tv.Fragments[0]
	raw := ""
	for _, kv := range tv.Metadata {
		if kv.Key == metaFragPrefix+name {
			raw = kv.Value
		}
	}
	// The same (remembered) info under a name that is not a ULID.
	bad := tv
	bad.Fragments = append([]string{"not-a-ulid"}, tv.Fragments[1:]...)
	bad = withMeta(bad, metaFragPrefix+"not-a-ulid", raw)
	md := bad.Metadata[:0:0]
	for _, kv := range bad.Metadata {
		if kv.Key != metaFragPrefix+name {
			md = append(md, kv)
		}
	}
	bad.Metadata = md
	for _, m := range []*codecMemo{nil, memo} {
		if _, _, err := fragmentInfos(tb, bad, nil, m); !errors.Is(err, format.ErrCorrupt) || !strings.Contains(err.Error(), "not sane") {
			t.Fatalf("remembered info under a bad name (memo %v): %v, want a not-sane ErrCorrupt", m != nil, err)
		}
	}
	// The same info checked against a table whose columns differ: its
	// statistics do not fit Company's columns.
	cat, err := g.catalog(ctx, snap(t, g).ks.SchemaHash())
	must(t, err)
	co, err := cat.table("Company")
	must(t, err)
	for _, m := range []*codecMemo{nil, memo} {
		if _, _, err := fragmentInfos(co, tv, nil, m); !errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("Person's infos read as Company's (memo %v): %v, want ErrCorrupt", m != nil, err)
		}
	}
	// A corrupt info is refused every time and never remembered.
	n := len(memo.infos)
	corrupt := withMeta(tv, metaFragPrefix+name, strings.Replace(raw, `"rows":`, `"rows":0,"x":`, 1))
	for range 2 {
		if _, _, err := fragmentInfos(tb, corrupt, nil, memo); !errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("corrupt info: %v, want ErrCorrupt", err)
		}
	}
	if len(memo.infos) != n {
		t.Fatalf("a refused info was remembered (%d entries, had %d)", len(memo.infos), n)
	}
	// Remembered embedded text under a name that is not a ULID, and text
	// that is not strict base64.
	emd := map[string]string{}
	for _, kv := range tv.Metadata {
		emd[kv.Key] = kv.Value
	}
	if _, err := parseEmbeds(emd, memo); err != nil {
		t.Fatal(err)
	}
	var text string
	for k, v := range emd {
		if strings.HasPrefix(k, metaEmbedPrefix) {
			text = v
		}
	}
	for _, c := range []struct {
		name string
		md   map[string]string
	}{
		{"bad name", map[string]string{metaEmbedPrefix + "x": text}},
		{"not base64", map[string]string{metaEmbedPrefix + name: text[:len(text)-4] + "!!!!"}},
	} {
		for _, m := range []*codecMemo{nil, memo} {
			if _, err := parseEmbeds(c.md, m); err == nil {
				t.Fatalf("%s (memo %v): accepted", c.name, m != nil)
			}
		}
	}
	if _, err := memo.decodeEmbed("!!!!"); err == nil {
		t.Fatalf("decode of non-base64: %v", err)
	}
	if _, ok := memo.b64dec["!!!!"]; ok {
		t.Fatal("a refused decode was remembered")
	}
}

// TestCodecMemoBounded: each map of the memo stays within its bound.
func TestCodecMemoBounded(t *testing.T) {
	memo := newCodecMemo()
	for i := range 3 * memoEntries {
		b := []byte{byte(i), byte(i >> 8), 1}
		s := memo.encodeEmbed(b)
		if got, err := memo.decodeEmbed(s); err != nil || string(got) != string(b) || s != base64.StdEncoding.EncodeToString(b) {
			t.Fatalf("round trip of %v: %q %v %v", b, s, got, err)
		}
		memo.putInfo(&Table{}, s, memoInfo{})
	}
	if len(memo.b64enc) > memoEmbeds || len(memo.b64dec) > memoEmbeds || len(memo.infos) > memoEntries {
		t.Fatalf("memo holds %d encodes, %d decodes, %d infos; bounds %d, %d", len(memo.b64enc), len(memo.b64dec), len(memo.infos), memoEmbeds, memoEntries)
	}
}

package feed

import (
	"errors"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func sampleToken(kind TokenKind) Token {
	t := Token{Kind: kind, Binding: Binding{Graph: ID{1, 2, 3}, Filter: Filter{}.Digest()}}
	if kind != KindCommitPage {
		t.Branch, t.Incarnation = "main", ID{9}
		t.Last = Point{Commit: ID{7}, Branch: "main", Incarnation: 1, Version: 41}
	}
	if kind != KindCursor {
		t.At = Point{Commit: ID{8}, Branch: "main", Incarnation: 1, Version: 42}
		t.Resume = Resume{Type: "Person", After: "p17"}
	}
	return t
}

// TestTokenRoundTrip: every kind encodes and decodes to itself.
func TestTokenRoundTrip(t *testing.T) {
	for _, k := range []TokenKind{KindCursor, KindPage, KindCommitPage} {
		tok := sampleToken(k)
		got, err := Decode(tok.Encode())
		if err != nil {
			t.Fatalf("kind %d: %v", k, err)
		}
		if got != tok {
			t.Fatalf("kind %d: round trip %+v != %+v", k, got, tok)
		}
	}
	beginning := Token{Kind: KindCursor, Binding: Binding{Graph: ID{1}, Branch: "b", Incarnation: ID{2}}}
	if got, err := Decode(beginning.Encode()); err != nil || got != beginning {
		t.Fatalf("cursor before the first commit: %+v, %v", got, err)
	}
}

// TestDecodeRefusesTyped: each way a token can be wrong is a *CursorError
// naming its problem.
func TestDecodeRefusesTyped(t *testing.T) {
	good := sampleToken(KindPage).Encode()
	raw := []byte(good)
	raw0 := mustRaw(t, good)
	flipped := append([]byte(nil), raw...)
	flipped[20] = 'A'
	if raw[20] == 'A' {
		flipped[20] = 'B'
	}
	badVersion := reencode(t, good, func(b []byte) { b[3] = 2 })
	badKind := reencodeSummed(t, good, func(b []byte) []byte { b[4] = 9; return b })
	zeroIncOnBranch := Token{Kind: KindCursor, Binding: Binding{Graph: ID{1}, Branch: "main"}}
	cases := []struct {
		name string
		in   string
		want CursorProblem
	}{
		{"empty", "", Malformed},
		{"too long", strings.Repeat("A", MaxTokenBytes+1), Malformed},
		{"not base64", "!!!", Malformed},
		{"padded base64", good + "=", Malformed},
		{"foreign bytes", "aGVsbG8gd29ybGQgaGVsbG8", Malformed},
		{"bit flip", string(flipped), Checksum},
		{"truncated", b64(raw0[:len(raw0)-3]), Checksum},
		{"unknown version", badVersion, UnknownVersion},
		{"unknown kind", badKind, Malformed},
		{"branch without incarnation", zeroIncOnBranch.Encode(), Malformed},
	}
	for _, c := range cases {
		_, err := Decode(c.in)
		var ce *CursorError
		if !errors.As(err, &ce) || !errors.Is(err, ErrBadCursor) || ce.Problem != c.want {
			t.Errorf("%s: got %v, want problem %s", c.name, err, c.want)
		}
	}
}

// reencode edits the raw bytes (without fixing the checksum).
func reencode(t *testing.T, s string, edit func([]byte)) string {
	t.Helper()
	b := mustRaw(t, s)
	edit(b)
	return b64(b)
}

// reencodeSummed edits the body and recomputes the checksum (a forger who
// knows the layout).
func reencodeSummed(t *testing.T, s string, edit func([]byte) []byte) string {
	t.Helper()
	b := mustRaw(t, s)
	body := edit(b[:len(b)-checksumBytes])
	return b64(appendSum(body))
}

// TestCheckBinding: a token is accepted only with its graph, branch name,
// filter and kind; another incarnation of the same name is ErrBranchChanged.
func TestCheckBinding(t *testing.T) {
	tok := sampleToken(KindCursor)
	other := func(edit func(*Binding)) Binding { b := tok.Binding; edit(&b); return b }
	cases := []struct {
		name string
		kind TokenKind
		b    Binding
		want error
		prob CursorProblem
	}{
		{"same", KindCursor, tok.Binding, nil, 0},
		{"other graph", KindCursor, other(func(b *Binding) { b.Graph[0]++ }), ErrBadCursor, ForeignGraph},
		{"other branch", KindCursor, other(func(b *Binding) { b.Branch = "dev" }), ErrBadCursor, ForeignBranch},
		{"other filter", KindCursor, other(func(b *Binding) { b.Filter = Filter{Types: []string{"X"}}.Digest() }), ErrBadCursor, ForeignFilter},
		{"re-created branch", KindCursor, other(func(b *Binding) { b.Incarnation[0]++ }), ErrBranchChanged, 0},
		{"wrong kind", KindCommitPage, tok.Binding, ErrBadCursor, WrongKind},
	}
	for _, c := range cases {
		err := tok.Check(c.kind, c.b)
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
		var ce *CursorError
		if c.prob != 0 && (!errors.As(err, &ce) || ce.Problem != c.prob) {
			t.Errorf("%s: got %v, want problem %s", c.name, err, c.prob)
		}
	}
	if err := sampleToken(KindPage).Check(KindCursor, tok.Binding); err != nil {
		t.Errorf("a page token continues a poll: %v", err)
	}
}

// TestDeliveredMovesCursorOnlyAtBoundary pins the cursor rule: a partly
// delivered commit keeps Last and yields a page token at the resume point;
// a complete one moves Last to it.
func TestDeliveredMovesCursorOnlyAtBoundary(t *testing.T) {
	prev := sampleToken(KindCursor)
	at := Point{Commit: ID{8}, Branch: "main", Incarnation: 1, Version: 42}
	r := Resume{Type: "Person", After: "p3"}
	part := Delivered(prev, at, false, r)
	if part.Kind != KindPage || part.Last != prev.Last || part.At != at || part.Resume != r {
		t.Fatalf("partial delivery: %+v", part)
	}
	whole := Delivered(part, at, true, Resume{})
	if whole.Kind != KindCursor || whole.Last != at || !whole.At.IsZero() || whole.Resume != (Resume{}) {
		t.Fatalf("whole delivery: %+v", whole)
	}
	if whole.Binding != prev.Binding || part.Binding != prev.Binding {
		t.Fatal("binding changed")
	}
}

// TestPackerLimits: counts and bytes bound a page; the first change is
// always admitted, so one larger than MaxBytes goes out alone.
func TestPackerLimits(t *testing.T) {
	cases := []struct {
		name  string
		lim   Limits
		sizes []int
		want  int // changes admitted before the first refusal
	}{
		{"count", Limits{MaxChanges: 3, MaxBytes: 1000}, []int{1, 1, 1, 1}, 3},
		{"bytes", Limits{MaxChanges: 10, MaxBytes: 100}, []int{40, 40, 40}, 2},
		{"exact bytes", Limits{MaxChanges: 10, MaxBytes: 100}, []int{50, 50, 1}, 2},
		{"oversize alone", Limits{MaxChanges: 10, MaxBytes: 100}, []int{500, 1}, 1},
		{"oversize after others", Limits{MaxChanges: 10, MaxBytes: 100}, []int{10, 500}, 1},
	}
	for _, c := range cases {
		p := NewPacker(c.lim)
		n := 0
		for _, s := range c.sizes {
			if !p.Admit(s) {
				break
			}
			n++
		}
		if n != c.want {
			t.Errorf("%s: admitted %d, want %d", c.name, n, c.want)
		}
	}
}

// TestLimitsNormalize: zero takes the default, above the hard maximum is
// refused.
func TestLimitsNormalize(t *testing.T) {
	l, err := Limits{}.Normalize()
	if err != nil || l != (Limits{DefaultMaxChanges, DefaultMaxBytes, DefaultMaxCommits}) {
		t.Fatalf("defaults: %+v, %v", l, err)
	}
	for _, bad := range []Limits{{MaxChanges: HardMaxChanges + 1}, {MaxBytes: HardMaxBytes + 1}, {MaxCommits: HardMaxCommits + 1}, {MaxChanges: -1}} {
		if _, err := bad.Normalize(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if l, err := (Limits{HardMaxChanges, HardMaxBytes, HardMaxCommits}).Normalize(); err != nil || l.MaxBytes != HardMaxBytes {
		t.Errorf("hard maximums refused: %v", err)
	}
}

// TestOrder: nodes before edges, then by name; the filter drops types.
func TestOrder(t *testing.T) {
	in := []TypeRef{{"WorksAt", true}, {"Person", false}, {"Knows", true}, {"Company", false}}
	got := Order(in, Filter{})
	want := []TypeRef{{"Company", false}, {"Person", false}, {"Knows", true}, {"WorksAt", true}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
	if got := Order(in, Filter{Types: []string{"Knows", "Person"}}); len(got) != 2 || got[0].Name != "Person" {
		t.Fatalf("filtered order %v", got)
	}
	if i, err := ResumeIndex(want, Resume{Type: "Knows", After: "k"}); err != nil || i != 2 {
		t.Fatalf("resume index %d, %v", i, err)
	}
	if _, err := ResumeIndex(want, Resume{Type: "Nope"}); !errors.Is(err, ErrBadCursor) {
		t.Fatalf("unknown resume type: %v", err)
	}
	if !Before(TypeRef{"Z", false}, "z", TypeRef{"A", true}, "a") || Before(TypeRef{"P", false}, "b", TypeRef{"P", false}, "a") {
		t.Fatal("Before disagrees with Order")
	}
}

// TestFilterDigest: equal selections share a digest; different ones differ.
func TestFilterDigest(t *testing.T) {
	a := Filter{Types: []string{"B", "A", "A"}, Ops: []Op{OpDelete, OpInsert}}
	b := Filter{Types: []string{"A", "B"}, Ops: []Op{OpInsert, OpDelete}}
	if a.Digest() != b.Digest() {
		t.Fatal("same selection, different digests")
	}
	if (Filter{}).Digest() != (Filter{Ops: []Op{OpInsert, OpUpdate, OpDelete}}).Digest() {
		t.Fatal("all operations spelled out differ from the zero filter")
	}
	if (Filter{Types: []string{"AB"}}).Digest() == (Filter{Types: []string{"A", "B"}}).Digest() {
		t.Fatal("type boundaries not in the digest")
	}
	if a.Digest() == (Filter{Types: []string{"A", "B"}}).Digest() {
		t.Fatal("ops not in the digest")
	}
	if err := (Filter{Ops: []Op{9}}).Validate(); err == nil {
		t.Fatal("unknown op accepted")
	}
	if !a.WantsOp(OpDelete) || a.WantsOp(OpUpdate) || !a.WantsType("A") || a.WantsType("C") {
		t.Fatal("Wants disagrees with the filter")
	}
}

// TestChangeSize: deterministic, counts every image value, null is free.
func TestChangeSize(t *testing.T) {
	im := &Image{From: "a", To: "bb", Props: map[string]any{"s": "xyz", "b": []byte{}, "n": nil, "i": int64(1), "t": time.Unix(0, 0), "f": 1.5, "ok": true}}
	got := ChangeSize("T", "id", im, nil)
	want := changeOverhead + 1 + 2 + changeOverhead + 3 + (1 + 3) + (1 + 0) + (1 + 8) + (1 + 8) + (1 + 8) + (2 + 1)
	if got != want {
		t.Fatalf("size %d, want %d", got, want)
	}
}

// TestTokenProperties: rapid — any well-shaped token round-trips, and any
// single-byte change of its encoding is refused with ErrBadCursor.
func TestTokenProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tok := genToken(rt)
		s := tok.Encode()
		got, err := Decode(s)
		if err != nil || got != tok {
			rt.Fatalf("round trip: %+v, %v", got, err)
		}
		i := rapid.IntRange(0, len(s)-1).Draw(rt, "i")
		c := rapid.SampledFrom([]byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=!")).Draw(rt, "c")
		if c == s[i] {
			return
		}
		mut := s[:i] + string(c) + s[i+1:]
		if _, err := Decode(mut); !errors.Is(err, ErrBadCursor) {
			rt.Fatalf("changed byte %d accepted: %v", i, err)
		}
	})
}

func genID(rt *rapid.T, label string) ID {
	var id ID
	copy(id[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(rt, label))
	return id
}

func genPoint(rt *rapid.T, label string) Point {
	if rapid.Bool().Draw(rt, label+"-zero") {
		return Point{}
	}
	p := Point{Commit: genID(rt, label+"-id"), Branch: rapid.StringMatching(`[a-z]{1,10}`).Draw(rt, label+"-b"),
		Incarnation: rapid.Uint64Range(1, 1<<40).Draw(rt, label+"-inc"), Version: rapid.Uint64().Draw(rt, label+"-v")}
	if p.Commit.IsZero() {
		p.Commit[0] = 1
	}
	return p
}

func genToken(rt *rapid.T) Token {
	kind := rapid.SampledFrom([]TokenKind{KindCursor, KindPage, KindCommitPage}).Draw(rt, "kind")
	t := Token{Kind: kind, Binding: Binding{Graph: genID(rt, "graph"),
		Filter: Filter{Types: rapid.SliceOf(rapid.StringMatching(`[A-Z][a-z]{0,5}`)).Draw(rt, "types")}.Digest()}}
	if kind != KindCommitPage {
		t.Branch = rapid.StringMatching(`[a-z][a-z0-9._-]{0,20}`).Draw(rt, "branch")
		t.Incarnation = genID(rt, "inc")
		t.Incarnation[15] |= 1
		t.Last = genPoint(rt, "last")
	}
	if kind != KindCursor {
		t.At = genPoint(rt, "at")
		if t.At.IsZero() {
			t.At = Point{Commit: ID{1}, Branch: "x", Incarnation: 1}
		}
		t.Resume.Type = rapid.StringMatching(`([A-Z][a-z]{0,8})?`).Draw(rt, "rtype")
		if t.Resume.Type != "" {
			t.Resume.After = rapid.StringN(0, 300, maxResumeIDBytes).Draw(rt, "after")
		}
	}
	return t
}

// TestGapErrorMatchesBoth: a gap names its cause and matches ErrGap and
// the cause (the store's reclaimed-history error, once GC exists).
func TestGapErrorMatchesBoth(t *testing.T) {
	cause := errors.New("reclaimed")
	err := error(&GapError{Commit: "c1", Cause: cause})
	if !errors.Is(err, ErrGap) || !errors.Is(err, cause) || errors.Is(err, ErrBadCursor) {
		t.Fatalf("%v", err)
	}
}

package format

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// TestPlainWords: skipPlainWords skips eight bytes exactly when plainJSON
// holds for each, for every byte value at every position among plain and
// among random neighbours, and for a million random words.
func TestPlainWords(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	perByte := func(w [8]byte) bool {
		for _, c := range w {
			if !plainJSON[c] {
				return false
			}
		}
		return true
	}
	check := func(w [8]byte) {
		if got := skipPlainWords(w[:], 0); (got == 8) != perByte(w) || got != 0 && got != 8 {
			t.Fatalf("skipPlainWords(%q) = %d", w[:], got)
		}
	}
	for pos := range 8 {
		for c := range 256 {
			w := [8]byte{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'}
			w[pos] = byte(c)
			check(w)
			for range 16 {
				for i := range w {
					if i != pos {
						w[i] = byte(r.IntN(256))
					}
				}
				check(w)
			}
		}
	}
	for range 1_000_000 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		if r.IntN(2) == 0 { // mostly plain: the words that matter
			for i := range w {
				w[i] = byte(0x20 + r.IntN(0x60))
			}
		}
		check(w)
	}
}

// plainCanonical reports whether every string of a canonical payload is
// one the hand decoders read (printable ASCII with appendString's own
// escapes): the payloads they must accept.
func plainCanonical(payload []byte) bool {
	for i := 0; i < len(payload); i++ {
		c := payload[i]
		if c < 0x20 || c >= 0x80 {
			return false
		}
		if c == '\\' {
			n, _ := escapeAt(payload[i:])
			if n == 0 {
				return false
			}
			i += n - 1
		}
	}
	return true
}

// simpleField is a key and a scalar value of a payload: a string without
// escapes, a boolean or a number. The mutations below duplicate, drop,
// reorder and null such fields.
var simpleField = regexp.MustCompile(`,"[a-z_]+":("[^"\\]*"|true|false|-?[0-9]+)`)

// substitutions are targeted rewrites of canonical bytes: values the
// general path decodes but are not canonical, or refuses.
var substitutions = [][2]string{
	{`"format_stamp":13}`, `"format_stamp":013}`}, {`"format_stamp":13}`, `"format_stamp":1.3e1}`},
	{`"format_stamp":13}`, `"format_stamp":13.0}`}, {`"format_stamp":13}`, `"format_stamp":null}`},
	{`"format_stamp":13}`, `"format_stamp":65549}`}, {`"format_stamp":13}`, `"format_stamp":-0}`},
	{`"time_unix_nano":`, `"time_unix_nano":0`}, {`"time_unix_nano":`, `"time_unix_nano":-`}, {`"time_unix_nano":-`, `"time_unix_nano":`},
	{`"time_unix_nano":0,`, `"time_unix_nano":-0,`}, {`"time_unix_nano":0,`, `"time_unix_nano":0e0,`},
	{`"tombstone":false`, `"tombstone":null`}, {`"complete":true`, `"complete":1`}, {`"complete":false`, `"complete":null`},
	{`"fork_of":{`, `"fork_of":null,"x":{`}, {`,"commit":{`, `,"commit":null,"x":{`}, {`"parents":[`, `"parents":[],"x":[`},
	{`"tombstone":false`, `"tombstone":false,"tables":[]`}, {`"tombstone":true`, `"tombstone":true,"tables":null`},
	{`"rows":"`, `"rows":0,"x":"`}, {`"version":"0`, `"version":"+`}, {`"version":"0`, `"version":"\u0030`},
	{`"rows":"`, `"Rows":"`}, {`{"name":`, `{"NAME":`}, {`"schema":"`, `"schema":"\u0061`}, {`"schema":"`, `"schema":"\/`},
	{`"actor":"`, `"actor":"\u00e9`}, {`"actor":"`, `"actor":"é`}, {`"message":"`, `"message":"\n`}, {`"message":"`, `"message":"\u003C`},
	{`"message":"`, `"message":"\u003c`}, {`"message":"`, `"message":"<`}, {`"message":"`, `"message":"\"\\`},
	{`"message":"`, `"message":"\ud800`}, {`"message":"`, `"message":"\u2028`}, {`"message":"`, `"message":"\t`},
	{`/`, `\/`}, {`"kind":"commit"`, `"kind":"Commit"`},
	{`\u0026`, `&`}, {`\u003c`, `<`}, {`\u003e`, `>`}, {`"schema":"`, `"schema":"abcdefgh&`}, {`"schema":"`, `"schema":"abcdefgh\`},
	{`"schema":"`, `"schema":"abcdefg<`}, {`"schema":"`, `"schema":"abcdefgh\x7f`}, {`"schema":"`, "\"schema\":\"abcdefgh\x1f"},
	{`,"riding":`, `,"riding": `}, {`,"riding":{`, `,"riding":{ `}, {`,"riding":`, `,"riding":null,"x":`},
	{`,"riding":{"table":`, `,"riding":{"table":"x","table":`}, {`}}`, `} }`}, {`}]`, `},]`},
	{`,"attempt":"`, `,"attempt":"00000000000000000000000000","x":"`}, {`"gen":"0`, `"gen":"00000000000000000000","x":"0`},
	{`,"rides":true`, `,"rides":false`}, {`"based_on":{`, `"content_preserving":false,"based_on":{`},
	{`"reach":[`, `"reach":[],"x":[`}, {`"folds":[`, `"folds":null,"x":[`}, {`"fragments":[`, `"fragments":[],"x":[`},
	{`"metadata":[{"key":`, `"metadata":[{"key":"k","key":`}, {`"metadata":[`, `"metadata":[{"key":"a","value":"b","v":1},`},
	{`}`, `,"legacy":null}`}, {`{"version":`, ` {"version":`}, {`{"id":`, "{\n\"id\":"},
}

// mutate returns n mutations of payload: byte flips, truncations, inserted
// spaces and deleted bytes, duplicated, dropped, reordered, nulled and
// unknown fields, lowercased ids, and the substitutions above.
func mutate(r *rand.Rand, payload []byte, n int) [][]byte {
	var out [][]byte
	fields := simpleField.FindAllIndex(payload, -1)
	splice := func(at, end int, with string) []byte {
		return append(append(append([]byte(nil), payload[:at]...), with...), payload[end:]...)
	}
	for len(out) < n {
		b := append([]byte(nil), payload...)
		if len(b) == 0 {
			return out
		}
		p := r.IntN(len(b))
		switch r.IntN(12) {
		case 0:
			b[p] ^= byte(1 << r.IntN(8))
		case 1:
			b[p] = byte(r.IntN(256))
		case 2:
			b = b[:p]
		case 3:
			b = splice(p, p, " ")
		case 4:
			b = splice(p, p+1, "")
		case 5, 6:
			if len(fields) == 0 {
				continue
			}
			f := fields[r.IntN(len(fields))]
			field := string(payload[f[0]:f[1]])
			key := field[:strings.Index(field[1:], ":")+2]
			switch r.IntN(5) {
			case 0: // duplicated
				b = splice(f[0], f[1], field+field)
			case 1: // dropped
				b = splice(f[0], f[1], "")
			case 2: // null
				b = splice(f[0], f[1], key+"null")
			case 3: // unknown field beside it
				b = splice(f[0], f[1], field+`,"unknown":1`)
			default: // swapped with the next one
				i := r.IntN(len(fields))
				if i+1 >= len(fields) || fields[i][1] != fields[i+1][0] {
					continue
				}
				a, c := payload[fields[i][0]:fields[i][1]], payload[fields[i+1][0]:fields[i+1][1]]
				b = splice(fields[i][0], fields[i+1][1], string(c)+string(a))
			}
		case 7: // a lowercased id letter
			j := bytes.IndexAny(b[p:], "ABCDEFGHJKMNPQRSTVWXYZ")
			if j < 0 {
				continue
			}
			b[p+j] += 'a' - 'A'
		default:
			s := substitutions[r.IntN(len(substitutions))]
			idx := allIndex(payload, s[0])
			if len(idx) == 0 {
				continue
			}
			at := idx[r.IntN(len(idx))]
			b = splice(at, at+len(s[0]), s[1])
		}
		out = append(out, b)
	}
	return out
}

func allIndex(b []byte, sub string) []int {
	var out []int
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(sub))
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + 1
	}
}

// asciiManifest is m with every free text printable ASCII (genManifest's
// draw any runes, which the hand decoder leaves to the general path).
func asciiManifest(t *rapid.T, m Manifest) Manifest {
	text := rapid.StringMatching(`[ -~]{0,24}`)
	if m.Commit != nil {
		c := *m.Commit
		c.Actor, c.Message = text.Draw(t, "actor"), text.Draw(t, "message")
		m.Commit = &c
	}
	m.Tables = append([]TablePin(nil), m.Tables...)
	for i, p := range m.Tables {
		if p.Riding == "" {
			continue
		}
		var tv TableVersion
		if err := decodeCanonical("table-version", []byte(p.Riding), &tv); err != nil {
			t.Fatalf("riding payload: %v", err)
		}
		tv = asciiTableVersion(t, tv)
		payload, err := RidingPayload(&tv)
		if err != nil {
			t.Fatalf("riding payload: %v", err)
		}
		m.Tables[i].Riding = payload
	}
	return m
}

// asciiTableVersion is tv with printable ASCII fragments and metadata.
func asciiTableVersion(t *rapid.T, tv TableVersion) TableVersion {
	text := rapid.StringMatching(`[ -~]{1,24}`)
	for i := range tv.Fragments {
		tv.Fragments[i] = text.Draw(t, "frag")
	}
	for i := range tv.Metadata {
		tv.Metadata[i] = KV{fmt.Sprintf("k%03d", i), text.Draw(t, "mdv")}
	}
	return tv
}

// tb is what the checks below need of a test: a *testing.T, *testing.B or
// *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// differential checks one payload: the hand decoders agree with the
// general path (CheckHandDecoders), and the decoders the kernel calls
// (hand first, general on a decline) give the general path's verdict,
// error and value for each kind. It returns how many kinds the general
// path and the hand decoders accepted.
func differential(t tb, payload []byte) (accepted, byHand int) {
	t.Helper()
	kinds, err := CheckHandDecoders(payload)
	if err != nil {
		t.Fatal(err)
	}
	byHand = len(kinds)
	same := func(what string, got, want any, gotErr, wantErr error) {
		t.Helper()
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || gotErr == nil && !cmp.Equal(got, want) {
			t.Fatalf("%s of %q: %+v, %v; the general path %+v, %v\ndiff (-hand +general):\n%s", what, payload, got, gotErr, want, wantErr, cmp.Diff(got, want))
		}
		if wantErr == nil {
			accepted++
		}
	}
	var m, mWant Manifest
	same("manifest", m, mWant, decodeManifestPayload(payload, &m), decodeManifestPayloadStrict(payload, &mWant))
	var x, xWant CommitIndex
	same("commit index", x, xWant, decodeCommitIndexPayload(payload, &x), decodeCanonical("commit-index", payload, &xWant))
	var tv, tvWant TableVersion
	same("table version", tv, tvWant, decodeTableVersionPayload(payload, &tv), decodeCanonical("table-version", payload, &tvWant))
	return accepted, byHand
}

// mustAccept fails unless the hand decoder accepted kind on payload, a
// canonical encoding whose strings it reads.
func mustAccept(t tb, payload []byte, kind Kind) {
	t.Helper()
	got, err := CheckHandDecoders(payload)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range got {
		if k == kind {
			return
		}
	}
	if plainCanonical(payload) {
		t.Fatalf("the hand decoder declined a plain canonical %s: %q", kind, payload)
	}
}

// TestHandDecodersAreTheStrictPath: the hand decoders of canonical
// manifests, commit indexes and table versions (riding payloads too)
// accept exactly what the general path accepts (strict encoding/json
// decode, canonical re-encode), with deep-equal values. Rapid valid
// manifests (genManifest: riding pins, forks, merges; free text any runes
// or printable ASCII), table versions and commit indexes, and random
// hostile values of every field (encGen) are encoded, then each encoding
// and 16 mutations of it (byte flips, truncations, inserted spaces,
// duplicated, dropped, reordered, nulled and unknown fields, escapes such
// as \u00e9 and \/, numbers with exponents, signs and leading zeros,
// empty arrays, explicit zeros, lowercased ids) are decoded by both: the
// same verdict, error and value for every kind. Every plain canonical
// encoding (printable ASCII strings) is accepted by the hand decoder, so
// the fast path is what runs. Red when the hand decoder admits anything
// the general path refuses (say `\/`, an explicit zero attempt, `-0`).
func TestHandDecodersAreTheStrictPath(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 32))
	var payloads, mutants, accepted, mutantsByHand, hand int
	check := func(t tb, payload []byte, kind Kind) {
		mustAccept(t, payload, kind)
		if plainCanonical(payload) {
			hand++
		}
		payloads++
		for _, b := range mutate(r, payload, 16) {
			mutants++
			a, h := differential(t, b)
			accepted += a
			mutantsByHand += h
		}
	}
	t.Run("rapid", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) {
			m := genManifest(rt)
			if rapid.Bool().Draw(rt, "ascii") {
				m = asciiManifest(rt, m)
			}
			b, err := appendManifest(nil, &m)
			if err != nil {
				rt.Fatal(err)
			}
			check(rt, b, KindManifest)
			if got, ok := readCanonicalManifest(b); plainCanonical(b) && (!ok || !cmp.Equal(got, m)) {
				rt.Fatalf("hand decode %+v, want %+v\ndiff (-hand +want):\n%s", got, m, cmp.Diff(got, m))
			}
			for _, p := range m.Tables {
				if p.Riding != "" {
					check(rt, []byte(p.Riding), KindTableVersion)
				}
			}
			tv := genTableVersion(rt)
			if rapid.Bool().Draw(rt, "ascii") {
				tv = asciiTableVersion(rt, tv)
			}
			check(rt, appendTableVersion(nil, &tv), KindTableVersion)
		})
	})
	t.Run("hostile", func(t *testing.T) {
		g := encGen{r}
		for range 300 {
			m := g.manifest()
			if b, err := appendManifest(nil, &m); err == nil && m.Legacy == nil {
				check(t, b, KindManifest)
			}
			tv := g.tableVersion()
			check(t, appendTableVersion(nil, &tv), KindTableVersion)
			x := CommitIndex{ID: g.id(), At: g.manifestRef(), Complete: r.IntN(2) == 0, Reach: g.reach(), Gen: g.u64(), Folds: g.reach()}
			check(t, appendCommitIndex(nil, &x), KindCommitIndex)
		}
	})
	t.Logf("%d encodings (%d plain, every one accepted by hand), %d mutations (%d kinds accepted by the general path, %d by hand)",
		payloads, hand, mutants, accepted, mutantsByHand)
	if hand < 150 || accepted == 0 {
		t.Fatalf("vacuous: %d of %d encodings plain, %d mutants accepted", hand, payloads, accepted)
	}
}

// TestHandDecodersRefuseByHand pins single cases of the canonical form:
// each the hand decoder declines, and the general path gives its own
// verdict (differential).
func TestHandDecodersRefuseByHand(t *testing.T) {
	pin, _ := ridingPin(t)
	m := Manifest{Version: 4, Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: ID{9}}, Tables: []TablePin{pin},
		Commit: &Commit{ID: ID{5}, Parents: []ID{{6}}, Actor: "x", Message: "<&>\"\\", TimeUnixNano: -1, Kind: KindCommit}, Head: ID{5},
		Schema: strings.Repeat("a", 64), FormatStamp: CurrentFormat}
	good, err := appendManifest(nil, &m)
	if err != nil {
		t.Fatal(err)
	}
	mustAccept(t, good, KindManifest)
	// general: whether the general path accepts the payload (a riding
	// payload must be a table version in canonical form there too, as
	// the hand decoder requires; the frame check of ValidatePins and
	// RidingVersion judge it against its pin later).
	for _, c := range []struct {
		name, from, to string
		general        bool
	}{
		{"slash escaped", `"actor":"x"`, `"actor":"\/"`, false},
		{"explicit zero attempt", `,"attempt":"` + pin.Attempt.String() + `","riding"`, `,"attempt":"00000000000000000000000000","riding"`, false},
		{"explicit zero attempt in riding", `,"attempt":"` + pin.Attempt.String() + `"}`, `,"attempt":"00000000000000000000000000"}`, false},
		{"minus zero", `"time_unix_nano":-1`, `"time_unix_nano":-0`, false},
		{"leading zero", `"format_stamp":13`, `"format_stamp":013`, false},
		{"exponent", `"format_stamp":13`, `"format_stamp":1.3e1`, false},
		{"space in riding", `,"riding":{"table":`, `,"riding":{ "table":`, false},
		{"space", `,"riding":{"table":`, `, "riding":{"table":`, false},
		{"unknown field", `"tombstone":false`, `"tombstone":false,"x":1`, false},
		{"duplicated field", `"tombstone":false`, `"tombstone":false,"tombstone":false`, false},
		{"reordered fields", `"actor":"x","message":"\u003c\u0026\u003e\"\\"`, `"message":"\u003c\u0026\u003e\"\\","actor":"x"`, false},
		{"null", `"tombstone":false`, `"tombstone":null`, false},
		{"e acute escaped", `"actor":"x"`, `"actor":"\u00e9"`, false},
		{"uppercase escape", `"message":"\u003c`, `"message":"\u003C`, false},
		{"empty tables", `"tombstone":false,"tables":[`, `"tombstone":false,"tables":[],"x":[`, false},
		// TablePin.UnmarshalJSON keeps everything after the riding key as the
		// payload: here `[1],"x":{...}`, which no decode of a manifest may
		// accept (the general path checks each riding payload is a table
		// version in canonical form, as the hand decoder does)
		{"riding then an unknown field", `,"riding":{`, `,"riding":[1],"x":{`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !bytes.Contains(good, []byte(c.from)) {
				t.Fatalf("%q not in %s", c.from, good)
			}
			b := bytes.Replace(good, []byte(c.from), []byte(c.to), 1)
			if _, ok := readCanonicalManifest(b); ok {
				t.Fatalf("the hand decoder accepts %s", b)
			}
			if a, _ := differential(t, b); (a > 0) != c.general {
				t.Fatalf("the general path accepts %s: %v, want %v", b, a > 0, c.general)
			}
		})
	}
}

// representativeManifest is a format-11 manifest as a service writes it:
// a merge commit with its parents, a fork point, eight tables, three of
// them riding versions with fragments, embedded data and based_on.
func representativeManifest(tb testing.TB) Manifest {
	var pins []TablePin
	for i := range 8 {
		p := TablePin{Name: fmt.Sprintf("Table%d", i), Fork: ID{1, byte(i)}, Version: uint64(100 + i), Rows: uint64(1000 * i), Attempt: ID{2, byte(i)}}
		if i%3 == 0 {
			tv := TableVersion{Table: p.Name, Fork: p.Fork, Version: p.Version, Rows: p.Rows, Attempt: p.Attempt,
				Fragments: []string{"01JGJFGR48GRTEWC7MGP1KYWD8", "01JGJFGR48GRTEWC7MGP1KYWD9"},
				Metadata: []KV{{"data.adj.id", `{"chunks":["01JGJFGR48GRTEWC7MGP1KYWDA"],"n":1000}`},
					{"data.embed.01JGJFGR48GRTEWC7MGP1KYWD9", strings.Repeat("KLUv/WDyIH0mAOpYvA0ygPSk+/=", 40)}},
				BasedOn: &TableRef{Fork: p.Fork, Version: p.Version - 1, Attempt: ID{3, byte(i)}, Rides: true}}
			payload, err := RidingPayload(&tv)
			if err != nil {
				tb.Fatal(err)
			}
			p.Riding = payload
		}
		pins = append(pins, p)
	}
	return Manifest{Version: 4242, Branch: BranchIdentity{Name: "feature", Incarnation: 3, IncarnationID: ID{9}},
		ForkOf: &ForkPoint{Branch: "main", Incarnation: 1, IncarnationID: ID{8}, ManifestVersion: 77, CommitID: ID{7}},
		Tables: pins, Commit: &Commit{ID: ID{5}, Parents: []ID{{6}, {4}}, Actor: "svc-writer", Message: "merge main into feature",
			TimeUnixNano: 1796600000000000000, Kind: KindMerge, MergedFrom: &ManifestRef{Branch: "main", Incarnation: 1, Version: 900}},
		Head: ID{5}, Schema: strings.Repeat("ab", 32), FormatStamp: CurrentFormat}
}

// BenchmarkDecodeManifestHandVsStrict decodes one representative format-11
// manifest payload (representativeManifest: a merge commit with two
// parents, a fork point, eight pins, three of them riding) by the general
// path (strict-ns/op: encoding/json, re-encode, compare; as before the
// hand decoder) and by the decoder DecodeManifest now runs (hand-ns/op),
// alternating within each iteration, and one of its riding payloads the
// same way (riding-*, RidingVersion's decode); it reports the ratios
// (speedup: strict/hand) and each side's allocations per decode.
func BenchmarkDecodeManifestHandVsStrict(b *testing.B) {
	m := representativeManifest(b)
	payload, err := appendManifest(nil, &m)
	if err != nil {
		b.Fatal(err)
	}
	mustAccept(b, payload, KindManifest)
	riding := []byte(m.Tables[0].Riding)
	mustAccept(b, riding, KindTableVersion)
	sides := []func(){
		func() { var v Manifest; must(b, decodeManifestPayloadStrict(payload, &v)) },
		func() { var v Manifest; must(b, decodeManifestPayload(payload, &v)) },
		func() { var v TableVersion; must(b, decodeCanonical("table-version", riding, &v)) },
		func() { var v TableVersion; must(b, decodeTableVersionPayload(riding, &v)) },
	}
	allocs := make([]float64, len(sides))
	for i, f := range sides {
		allocs[i] = testing.AllocsPerRun(20, f)
	}
	spent := make([]time.Duration, len(sides))
	for b.Loop() {
		for i, f := range sides {
			start := time.Now()
			f()
			spent[i] += time.Since(start)
		}
	}
	ns := func(i int) float64 { return float64(spent[i].Nanoseconds()) / float64(b.N) }
	b.ReportMetric(ns(0), "strict-ns/op")
	b.ReportMetric(ns(1), "hand-ns/op")
	b.ReportMetric(ns(0)/ns(1), "speedup")
	b.ReportMetric(allocs[0], "strict-allocs/op")
	b.ReportMetric(allocs[1], "hand-allocs/op")
	b.ReportMetric(ns(2), "riding-strict-ns/op")
	b.ReportMetric(ns(3), "riding-hand-ns/op")
	b.ReportMetric(ns(2)/ns(3), "riding-speedup")
	b.ReportMetric(allocs[2], "riding-strict-allocs/op")
	b.ReportMetric(allocs[3], "riding-hand-allocs/op")
	b.ReportMetric(float64(len(payload)), "payload-bytes")
}

func must(tb testing.TB, err error) {
	if err != nil {
		tb.Fatal(err)
	}
}

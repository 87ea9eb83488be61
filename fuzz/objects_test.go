package fuzz

import (
	"strings"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// Valid sample objects: the seeds of every decoder's corpus.

func id(b byte) format.ID {
	var x format.ID
	for i := range x {
		x[i] = b + byte(i)
	}
	x[0] &= 0x7f
	return x
}

var schemaSum = strings.Repeat("ab", 32)

func sampleManifests() map[string]format.Manifest {
	main := format.BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: id(1)}
	feat := format.BranchIdentity{Name: "feature-1", Incarnation: 2, IncarnationID: id(2)}
	fork := &format.ForkPoint{Branch: "main", Incarnation: 1, IncarnationID: id(1), ManifestVersion: 7, CommitID: id(3)}
	pins := []format.TablePin{{Name: "edges", Fork: id(1), Version: 4, Rows: 10}, {Name: "nodes", Fork: id(2), Version: 9, Rows: 3}}
	commit := func(kind format.CommitKind, parents ...format.ID) *format.Commit {
		c := &format.Commit{ID: id(40 + byte(len(kind))), Parents: parents, Actor: "etl <job>", Message: "load \"people\" & more\n",
			TimeUnixNano: 1735787045000000000, Kind: kind}
		if kind == format.KindMerge {
			c.MergedFrom = &format.ManifestRef{Branch: "feature-1", Incarnation: 2, Version: 3}
		}
		return c
	}
	out := map[string]format.Manifest{
		"genesis": {Branch: main, Commit: commit(format.KindGenesis), Schema: schemaSum, FormatStamp: format.CurrentFormat},
		"fork":    {Branch: feat, ForkOf: fork, Tables: pins, Head: fork.CommitID, Schema: schemaSum, FormatStamp: format.CurrentFormat},
		"commit":  {Version: 8, Branch: main, Tables: pins, Commit: commit(format.KindCommit, id(3)), Schema: schemaSum, FormatStamp: format.CurrentFormat},
		"merge":   {Version: 9, Branch: feat, ForkOf: fork, Tables: pins, Commit: commit(format.KindMerge, id(3), id(5)), Schema: schemaSum, FormatStamp: format.CurrentFormat},
		"tombstone": {Version: 10, Branch: feat, ForkOf: fork, Tombstone: true, Tables: pins, Commit: commit(format.KindBranchDelete, id(3)),
			Schema: schemaSum, FormatStamp: format.CurrentFormat},
		// Format 11: edges v5 rides the manifest (its pin carries the
		// version's payload).
		"riding": {Version: 11, Branch: main, Tables: []format.TablePin{ridingPin(), pins[1]}, Commit: commit(format.KindCommit, id(3)),
			Schema: schemaSum, FormatStamp: format.CurrentFormat},
	}
	for k, m := range out {
		if m.Commit != nil {
			m.Head = m.Commit.ID
			out[k] = m
		}
	}
	return out
}

// namedVersion is a table version named per attempt: one that may ride
// its manifest (format 11).
func namedVersion() format.TableVersion {
	return format.TableVersion{Table: "edges", Fork: id(1), Version: 5, Attempt: id(60), Fragments: []string{"frag-3"}, Rows: 2,
		Metadata: []format.KV{{Key: "codec", Value: "arrow"}}}
}

// ridingPin pins namedVersion riding its manifest.
func ridingPin() format.TablePin {
	tv := namedVersion()
	payload, err := format.RidingPayload(&tv)
	if err != nil {
		panic(err)
	}
	return format.TablePin{Name: tv.Table, Fork: tv.Fork, Version: tv.Version, Rows: tv.Rows, Attempt: tv.Attempt, Riding: payload}
}

func sampleTableVersions() map[string]format.TableVersion {
	return map[string]format.TableVersion{
		"named": namedVersion(),
		"first": {Table: "nodes", Fork: id(1), Version: 1, Rows: 0},
		"full": {Table: "edges", Fork: id(2), Version: 12, Fragments: []string{"data/edges/01J000", "frag-2"}, Rows: 1 << 40,
			Metadata: []format.KV{{Key: "codec", Value: "arrow"}, {Key: "z", Value: "ünï"}}, BasedOn: &format.TableRef{Fork: id(1), Version: 11}},
	}
}

var token = format.Token{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}

func mustManifest(m format.Manifest) []byte {
	b, err := format.EncodeManifest(&m, token)
	if err != nil {
		panic(err)
	}
	return b
}

func mustTableVersion(t format.TableVersion) []byte {
	b, err := format.EncodeTableVersion(&t, token)
	if err != nil {
		panic(err)
	}
	return b
}

// sampleCommitIndexes are commit indexes of every shape: incomplete,
// legacy (complete, gen 0), and with gens and folds.
func sampleCommitIndexes() map[string]format.CommitIndex {
	at := format.ManifestRef{Branch: "x", Incarnation: 1, Version: 3}
	main := func(v, gen uint64) format.ReachEntry {
		return format.ReachEntry{ManifestRef: format.ManifestRef{Branch: "main", Incarnation: 1, Version: v}, Gen: gen}
	}
	return map[string]format.CommitIndex{
		"incomplete": {ID: id(1), At: at},
		"legacy":     {ID: id(2), At: at, Complete: true, Reach: []format.ReachEntry{main(7, 0), {ManifestRef: at}}},
		"folds": {ID: id(3), At: at, Complete: true, Gen: 9, Reach: []format.ReachEntry{main(7, 8), {ManifestRef: at, Gen: 9}},
			Folds: []format.ReachEntry{main(5, 6)}},
	}
}

func mustCommitIndex(x format.CommitIndex) []byte {
	b, err := format.EncodeCommitIndex(&x, token)
	if err != nil {
		panic(err)
	}
	return b
}

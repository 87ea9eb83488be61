package verify

import (
	"context"
	"errors"

	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// pagedInfos reads the fragment infos of a paged table version (docs/
// format.md, "Paged fragment infos") through its fragment chunks, each
// checked as a reader does (size, CRC-32C, infos, count, rows and id
// envelope against its ref; data.PagedFragmentInfos). It returns nil and
// no problem for an inline version. A chunk is read once per verify (it
// counts as an adjacency object); a chunk that cannot be read or breaks a
// rule is the problem, on the chunk's key.
func (v *verifier) pagedInfos(ctx context.Context, key string, tv format.TableVersion) ([]data.FragmentInfo, *Problem) {
	infos, paged, err := data.PagedFragmentInfos(tv, func(name string) ([]byte, error) {
		ck := v.adjKey(tv.Table, name)
		if ck == "" {
			return nil, errors.New("name is not a ULID")
		}
		if !v.seenFrag[ck] {
			v.seenFrag[ck] = true
			v.rep.AdjacencyObjects++
		}
		b, ok := v.getBounded(ctx, ck, maxFragmentBytes)
		if !ok {
			return nil, errAlreadyReported
		}
		return b, nil
	})
	var ce *data.ChunkError
	switch {
	case errors.Is(err, errAlreadyReported):
		return nil, &Problem{key, RuleAdjacency, "a fragment chunk it lists did not read (reported on the chunk)"}
	case errors.As(err, &ce):
		if ck := v.adjKey(tv.Table, ce.Name); ck != "" {
			return nil, &Problem{ck, RuleAdjacency, ce.Error()}
		}
		return nil, &Problem{key, RuleAdjacency, ce.Error()}
	case err != nil:
		return nil, &Problem{key, RuleDecode, err.Error()}
	case !paged:
		return nil, nil
	}
	if infos == nil {
		infos = []data.FragmentInfo{}
	}
	return infos, nil
}

// errAlreadyReported marks a read failure getBounded already reported.
var errAlreadyReported = errors.New("read failure already reported")

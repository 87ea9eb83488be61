package workload

import (
	"encoding/binary"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// seedLeftoverIndex is the core workload's seed step: it writes the commit
// index a build before issue #32 left behind for a publish attempt that
// never landed (it wrote the index before the manifest): an index of a
// commit that does not exist, naming main#1 v0, which holds the genesis.
// Since the index follows the publish no attempt leaves one, but stores
// written by older builds (the format did not change) still hold them,
// and the cold lookups must not take that slot's commit for it (the
// planted bug trust-commit-index; check cold-lookup). The id is a
// function of the seed.
func seedLeftoverIndex(p *Proc) error {
	var id format.ID
	binary.BigEndian.PutUint64(id[:8], 0x0001_0000_0000_0000|p.run.S.Seed&0xffff_ffff_ffff)
	binary.BigEndian.PutUint64(id[8:], ^p.run.S.Seed)
	x := format.CommitIndex{ID: id, At: format.ManifestRef{Branch: format.MainBranch, Incarnation: 1, Version: 0}}
	b, err := format.EncodeCommitIndex(&x, format.Token{0x1e, 0xf7})
	if err != nil {
		return fmt.Errorf("workload: leftover index: %w", err)
	}
	key := format.NewKeys(p.run.Root).CommitIndex(id)
	return p.seedRetry("leftover commit index never written", func(int) error {
		_, err := p.run.Store.Put(p.Ctx(), key, b, objstore.Unconditional)
		return err
	})
}

package lineage

// VersionMark is what the expectation rule needs of one table version: its
// number, the number of the version its content was built on (0: none) and
// whether it is content-preserving (a compaction: the rows of BasedOn in
// other fragments).
type VersionMark struct {
	Version    uint64
	BasedOn    uint64
	Preserving bool
}

// MaxPreservingChain bounds how many versions a driver loads to answer
// PinSatisfied: beyond it the answer is "not satisfied" (keep strict).
const MaxPreservingChain = 64

// PinSatisfied reports whether a pin of version v is satisfied by the
// version chain[0]: true when chain[0] is v, or when every version on the
// based_on chain from chain[0] back to v is content-preserving, so the
// table holds exactly the rows it held at v. chain lists versions newest
// first, each entry the BasedOn of the one before it. A chain that ends, or
// breaks, before reaching v answers false: in doubt, the pin is not
// satisfied and the strict writer keeps failing as before.
func PinSatisfied(v uint64, chain []VersionMark) bool {
	for i, m := range chain {
		switch {
		case m.Version == v:
			return true
		case m.Version < v || !m.Preserving:
			return false
		case m.BasedOn == v:
			return true // preserving, built on v itself: no need to load v
		case i+1 < len(chain) && chain[i+1].Version != m.BasedOn:
			return false // not a based_on chain: never guess
		}
	}
	return false
}

// ChainNeedsMore reports whether a driver that loaded chain (newest first)
// must load the version chain's last entry is based on to answer
// PinSatisfied(v, chain), and which. It never asks beyond
// MaxPreservingChain entries.
func ChainNeedsMore(v uint64, chain []VersionMark) (next uint64, more bool) {
	if len(chain) == 0 || len(chain) >= MaxPreservingChain {
		return 0, false
	}
	last := chain[len(chain)-1]
	if last.Version <= v || !last.Preserving || last.BasedOn <= v {
		return 0, false
	}
	return last.BasedOn, true
}

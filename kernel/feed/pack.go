package feed

import "fmt"

// Page limits: defaults and hard maximums. A zero limit takes the default;
// a limit above the maximum is refused.
const (
	DefaultMaxChanges = 1000
	HardMaxChanges    = 8192
	DefaultMaxBytes   = 4 << 20
	HardMaxBytes      = 32 << 20
	DefaultMaxCommits = 128
	HardMaxCommits    = 512
)

// Limits bound one page: changes, bytes (by ChangeSize) and commit blocks.
type Limits struct {
	MaxChanges int
	MaxBytes   int
	MaxCommits int
}

// Normalize fills zero fields with the defaults and refuses negative
// values or values above the hard maximums.
func (l Limits) Normalize() (Limits, error) {
	fill := func(name string, v *int, def, hard int) error {
		switch {
		case *v == 0:
			*v = def
		case *v < 0 || *v > hard:
			return fmt.Errorf("feed: limit %s = %d not in 1..%d", name, *v, hard)
		}
		return nil
	}
	if err := fill("MaxChanges", &l.MaxChanges, DefaultMaxChanges, HardMaxChanges); err != nil {
		return Limits{}, err
	}
	if err := fill("MaxBytes", &l.MaxBytes, DefaultMaxBytes, HardMaxBytes); err != nil {
		return Limits{}, err
	}
	if err := fill("MaxCommits", &l.MaxCommits, DefaultMaxCommits, HardMaxCommits); err != nil {
		return Limits{}, err
	}
	return l, nil
}

// Packer fills one page under normalized limits. The first change of a
// page is always admitted, even one larger than MaxBytes (it goes out alone
// on its page); later changes are admitted while the page holds fewer than
// MaxChanges and their bytes stay within MaxBytes.
type Packer struct {
	lim     Limits
	changes int
	bytes   int
}

// NewPacker returns an empty page's packer.
func NewPacker(lim Limits) *Packer { return &Packer{lim: lim} }

// Admit reports whether a change of size bytes goes on this page, and if
// so counts it.
func (p *Packer) Admit(size int) bool {
	if p.changes > 0 && (p.changes >= p.lim.MaxChanges || p.bytes+size > p.lim.MaxBytes) {
		return false
	}
	p.changes++
	p.bytes += size
	return true
}

// Full reports whether no further change can be admitted whatever its
// size.
func (p *Packer) Full() bool {
	return p.changes >= p.lim.MaxChanges || (p.changes > 0 && p.bytes >= p.lim.MaxBytes)
}

// Changes returns the changes admitted so far.
func (p *Packer) Changes() int { return p.changes }

// Bytes returns the bytes admitted so far.
func (p *Packer) Bytes() int { return p.bytes }

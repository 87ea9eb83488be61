package workload

import (
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// Riding scales (Workload.RidingScale): a data-plane table version rides
// with about 1–4 KB (data, lifetime, merge, schema: its index and
// fragment references), a kernel workload's with about 330 bytes, the
// crash-cut sweep's with about 200.
const (
	ridingScaleData   = 2000
	ridingScaleKernel = 350
	ridingScaleCuts   = 200
)

// ridingFor is the riding budget (kernel.Options.RidingBudget) of a
// scenario of seed in a workload whose versions' riding payloads are
// about scale bytes (Workload.RidingScale): a pure function of the seed,
// apart from the scenario generator's PRNG so that the operations a seed
// generates do not depend on it. A third of the seeds keep the format's
// maxima (every small version rides, as in production); a third bound
// the manifest to one to three payloads, so one or two tables ride, the
// rest spill to objects and racing writers' publishes go over budget and
// redo their rounds; a third bound the version too (to about a payload),
// so larger versions spill whatever the room.
func ridingFor(seed uint64, scale int) kernel.RidingBudget {
	h := splitmix(seed ^ 0x72696469_6e670000) // "riding"
	pick := int((h >> 8) % 5)
	switch h % 3 {
	case 1:
		return kernel.RidingBudget{ManifestBytes: min(scale*(2+pick)/2, format.MaxRidingManifestBytes)}
	case 2:
		return kernel.RidingBudget{VersionBytes: min(scale*(3+pick)/4, format.MaxRidingVersionBytes), ManifestBytes: min(scale*(2+pick/2), format.MaxRidingManifestBytes)}
	}
	return kernel.RidingBudget{}
}

// splitmix is one step of SplitMix64: a well-mixed hash of x.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
)

func init() {
	Register(&Workload{
		Name: "core",
		Doc: "writers on main and two side branches (disjoint and overlapping tables, strict and non-strict), " +
			"readers with snapshots at heads and old commits and cold-handle lineage lookups, a brancher creating, deleting and merging branches",
		Generate: func(seed uint64, faults string) *Scenario { return genCore(seed, faults, coreShape) },
		Plants:   []string{plant.IgnoreLostAck, plant.TrustCommitIndex, plant.ReachDropsMerge, plant.ReachDropsBase, plant.SkipForkMarker},
		Seed:     seedLeftoverIndex, // an older build's index of an attempt that never landed
		// The smallest reach bounds: most merges compact their reach into
		// folds, which the cold lookups' merge bases then expand.
		ReachEntries: 2, ReachFolds: 2,
	})
	Register(&Workload{
		Name:        "contention",
		RidingScale: ridingScaleKernel,
		Doc:         "many writers racing on main with short think times, plus readers: the publish retry loop under faults",
		Generate:    func(seed uint64, faults string) *Scenario { return genCore(seed, faults, contentionShape) },
		Plants:      []string{plant.ReparentOnce, plant.StaleViewCommit, plant.RidingUnchecked},
	})
}

// shape parameterises the core generator.
type shape struct {
	faultPhase, quietPhase time.Duration
	writers                [2]int // min, max
	readers                int
	branchers              int
	sideBranchShare        float64 // share of writer ops on side branches
	sharedTableShare       float64 // share of writers on shared tables
	strictShare            float64
	writerThink            [2]time.Duration
	readerThink            [2]time.Duration
	brancherThink          [2]time.Duration
}

var coreShape = shape{
	faultPhase: 8 * time.Minute, quietPhase: time.Minute,
	writers: [2]int{3, 6}, readers: 3, branchers: 1,
	sideBranchShare: 0.3, sharedTableShare: 0.5, strictShare: 0.3,
	writerThink:   [2]time.Duration{time.Second, 8 * time.Second},
	readerThink:   [2]time.Duration{time.Second, 6 * time.Second},
	brancherThink: [2]time.Duration{5 * time.Second, 20 * time.Second},
}

var contentionShape = shape{
	faultPhase: 3 * time.Minute, quietPhase: time.Minute,
	writers: [2]int{6, 8}, readers: 2, branchers: 0,
	sideBranchShare: 0, sharedTableShare: 0.3, strictShare: 0.2,
	writerThink: [2]time.Duration{100 * time.Millisecond, 2 * time.Second},
	readerThink: [2]time.Duration{time.Second, 4 * time.Second},
}

// sharedTables are written by several writers; every writer also has its own.
var sharedTables = []string{"t0", "t1", "t2"}

var sideBranches = []string{"b1", "b2"}

// genCore generates a core-family scenario: a pure function of its inputs.
func genCore(seed uint64, faults string, sh shape) *Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x636f7265)) // "core"
	s := &Scenario{Workload: "core", Seed: seed, Faults: faults, FaultPhase: sh.faultPhase, QuietPhase: sh.quietPhase}
	if sh.branchers == 0 {
		s.Workload = "contention"
	}
	nw := sh.writers[0] + rng.IntN(sh.writers[1]-sh.writers[0]+1)
	all := append([]string(nil), sharedTables...)
	for i := 0; i < nw; i++ {
		all = append(all, fmt.Sprintf("w%d", i))
	}
	for i := 0; i < nw; i++ {
		s.Actors = append(s.Actors, genWriter(rng, sh, i))
	}
	for i := 0; i < sh.readers; i++ {
		s.Actors = append(s.Actors, genReader(rng, sh, i, all))
	}
	for i := 0; i < sh.branchers; i++ {
		s.Actors = append(s.Actors, genBrancher(rng, sh, i))
	}
	return s
}

// think draws a think time in [lo, hi).
func think(rng *rand.Rand, r [2]time.Duration) time.Duration {
	return r[0] + time.Duration(rng.Int64N(int64(r[1]-r[0])))
}

// opsFor sizes an actor's plan to about fill the fault phase.
func opsFor(sh shape, r [2]time.Duration) int { return int(sh.faultPhase/((r[0]+r[1])/2)) + 1 }

func genWriter(rng *rand.Rand, sh shape, i int) ActorPlan {
	a := ActorPlan{Name: fmt.Sprintf("w%d", i)}
	shared := rng.Float64() < sh.sharedTableShare
	for n := opsFor(sh, sh.writerThink); n > 0; n-- {
		if rng.Float64() < 0.04 {
			a.Ops = append(a.Ops, Op{Kind: "reopen", Think: think(rng, sh.writerThink), Args: map[string]string{}})
			continue
		}
		branch := "main"
		if rng.Float64() < sh.sideBranchShare {
			branch = sideBranches[rng.IntN(len(sideBranches))]
		}
		tables := []string{fmt.Sprintf("w%d", i)}
		if shared {
			tables = pickTables(rng)
		}
		args := map[string]string{"branch": branch, "tables": strings.Join(tables, ",")}
		if rng.Float64() < sh.strictShare {
			args["strict"] = "1"
		}
		a.Ops = append(a.Ops, Op{Kind: "commit", Think: think(rng, sh.writerThink), Args: args})
	}
	return a
}

// pickTables picks one or two shared tables, in name order.
func pickTables(rng *rand.Rand) []string {
	i := rng.IntN(len(sharedTables))
	if rng.IntN(2) == 0 {
		return []string{sharedTables[i]}
	}
	j := (i + 1 + rng.IntN(len(sharedTables)-1)) % len(sharedTables)
	if j < i {
		i, j = j, i
	}
	return []string{sharedTables[i], sharedTables[j]}
}

func genReader(rng *rand.Rand, sh shape, i int, tables []string) ActorPlan {
	a := ActorPlan{Name: fmt.Sprintf("r%d", i)}
	for n := opsFor(sh, sh.readerThink); n > 0; n-- {
		branch := "main"
		if sh.branchers > 0 && rng.Float64() < 0.4 {
			branch = sideBranches[rng.IntN(len(sideBranches))]
		}
		op := Op{Think: think(rng, sh.readerThink), Args: map[string]string{"branch": branch}}
		switch x := rng.Float64(); {
		case x < 0.6:
			op.Kind = "read"
			op.Args["tables"] = strings.Join(tables, ",")
		case x < 0.7:
			op.Kind, op.Args["at"] = "snap", "head"
		case x < 0.8:
			op.Kind, op.Args["at"] = "snap", "old"
		case x < 0.88:
			op.Kind, op.Args["other"] = "lookup", "main"
			if sh.branchers > 0 {
				op.Args["other"] = sideBranches[rng.IntN(len(sideBranches))]
			}
		default:
			op.Kind, op.Args = "recheck", map[string]string{}
		}
		a.Ops = append(a.Ops, op)
	}
	return a
}

func genBrancher(rng *rand.Rand, sh shape, i int) ActorPlan {
	a := ActorPlan{Name: fmt.Sprintf("b%d", i)}
	for n := opsFor(sh, sh.brancherThink); n > 0; n-- {
		name := sideBranches[rng.IntN(len(sideBranches))]
		op := Op{Think: think(rng, sh.brancherThink), Args: map[string]string{}}
		switch x := rng.Float64(); {
		case x < 0.45:
			op.Kind, op.Args["name"], op.Args["from"] = "create", name, "main"
			if name == "b2" && rng.IntN(3) == 0 {
				op.Args["from"] = "b1" // a dependent: deleting b1 is then refused
			}
			if rng.IntN(3) == 0 {
				op.Args["at"] = "old"
			}
		case x < 0.8:
			op.Kind, op.Args["name"] = "delete", name
		default:
			op.Kind, op.Args["from"], op.Args["into"] = "merge", name, "main"
		}
		a.Ops = append(a.Ops, op)
	}
	return a
}

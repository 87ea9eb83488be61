package workload

import (
	"fmt"
	"sort"
	"time"
)

// Workload is one named family of scenarios: how to generate a scenario from
// a seed, and which planted bugs it is meant to catch.
type Workload struct {
	// Name is the registry key (simrun -workload NAME).
	Name string
	// Doc says in one line what the workload exercises.
	Doc string
	// Generate builds the scenario of seed under the named fault profile.
	// It must be a pure function of its arguments. Register makes it set
	// the scenario's riding budget (ridingFor) for a simulated workload.
	Generate func(seed uint64, faults string) *Scenario
	// Plants lists the planted bugs this workload must catch (simrun -plant
	// NAME without -workload picks the workload listing NAME).
	Plants []string
	// Pending, if set, says which issue must land before the workload can
	// run; Execute refuses it with that reason.
	Pending string
	// Contract is the schema contract the init process creates the graph
	// with (SchemaContract if nil).
	Contract []byte
	// Seed, if set, runs in the init process once the graph exists (to
	// create base data); it must retry until acknowledged.
	Seed func(p *Proc) error
	// Fixture, if set, runs in the init process instead of creating a graph:
	// it writes the pre-existing state (a v3 graph, say) with store faults
	// off and the init process immune to crashes, so the setup is exact.
	Fixture func(p *Proc) error
	// BuggifyFire, if positive, overrides the fault profile's failpoint
	// fire rate (workloads whose failpoints are few and decisive).
	BuggifyFire float64
	// Run, if set, replaces the simulated world entirely: the workload runs
	// its own harness (the crash-cut sweep does) and reports a Result.
	Run func(s *Scenario, opt Options) *Result
	// Reclaims marks a workload that collects garbage: the final checks
	// that walk the whole history (chains, forks, commits exactly once,
	// snapshots, recovery commits) do not apply; its own checkers cover the
	// retained history instead.
	Reclaims bool
	// Grace, if set, is the kernel grace period of every process's handles
	// (the maintenance workload collects with the same grace).
	Grace time.Duration
	// SkewMargin, if set, is the kernel skew margin of every process's
	// handles (the maintenance workload collects with the same margin).
	SkewMargin time.Duration
	// ReachEntries and ReachFolds, if set, bound the commit-index reaches
	// every process's handles write (kernel.Options): small values make a
	// short run compact reaches into folds.
	ReachEntries, ReachFolds int
	// IndexFanout, if set, replaces simIndexFanout as the index and
	// fragment-list fanout of every process's data handles
	// (data.Options.IndexFanout).
	IndexFanout int
	// Long marks a long form, run only by name (simrun -workload NAME):
	// the package's clean-run test skips it (minutes of wall time).
	Long bool
	// PhaseDone, if set, ends the fault phase as soon as it reports true
	// (checked every phaseStep of simulated time): Scenario.FaultPhase is
	// then only the phase's bound, and the janitor starts when the phase
	// ends. A workload sized by work done (lifetime-10k: every planned
	// cycle attempted) rather than by time sets it.
	PhaseDone func(r *Run) bool
	// RidingScale, if set, is about how many bytes the workload's table
	// versions ride their manifest with (format 11), and makes its
	// scenarios carry a riding budget chosen per seed on that scale
	// (Scenario.Riding, ridingFor): its writers' manifests go over budget
	// and their versions spill to objects beside riding ones, and the
	// final checks hold every manifest to the budget
	// (check.CheckRidingBudget).
	RidingScale int
	// Final, if set, runs in the janitor process in the quiet phase, after
	// every other process ended and the janitor's read-write open swept.
	Final func(p *Proc) error
}

var registry = map[string]*Workload{}

// Register adds w to the registry. It panics on a duplicate or empty name:
// registration happens in init functions, so that is a programming error.
func Register(w *Workload) {
	if w.Name == "" || w.Generate == nil && w.Pending == "" {
		panic("workload: Register needs a name and a generator")
	}
	if _, dup := registry[w.Name]; dup {
		panic(fmt.Sprintf("workload: %q registered twice", w.Name))
	}
	if gen := w.Generate; gen != nil && w.RidingScale > 0 {
		w.Generate = func(seed uint64, faults string) *Scenario {
			s := gen(seed, faults)
			s.Riding = ridingFor(seed, w.RidingScale)
			return s
		}
	}
	registry[w.Name] = w
}

// Lookup returns the workload registered as name.
func Lookup(name string) (*Workload, bool) {
	w, ok := registry[name]
	return w, ok
}

// Names lists the registered workloads, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	//detlint:ordered collects names, sorted next
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ForPlant returns the workload that lists the planted bug name.
func ForPlant(name string) (*Workload, bool) {
	for _, n := range Names() {
		for _, p := range registry[n].Plants {
			if p == name {
				return registry[n], true
			}
		}
	}
	return nil, false
}

// OpFunc executes one operation of a scenario in a process. It returns an
// error only when the process must end (its actor crashed or the world
// stopped); everything else an operation observes is recorded in the run.
type OpFunc func(p *Proc, index int, op Op) error

var opExec = map[string]OpFunc{}

// RegisterOp makes kind executable in scenarios. It panics on a duplicate.
func RegisterOp(kind string, f OpFunc) {
	if _, dup := opExec[kind]; dup {
		panic(fmt.Sprintf("workload: op %q registered twice", kind))
	}
	opExec[kind] = f
}

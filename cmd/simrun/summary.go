package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/graphkernel/graphkernel/sim/workload"
)

// Summary is the soak's result. The first block of JSON keys is the
// contract of the simulator issue, spelled exactly; the rest are extras.
type Summary struct {
	Seeds          int    `json:"seeds"`
	Ops            int    `json:"ops"`
	Commits        int    `json:"commits"`
	FaultsInjected uint64 `json:"faults_injected"`
	Crashes        int    `json:"crashes"`
	// MachineCrashes (the oscrash profile) and what they did to the
	// objects not yet durable: lost, reverted, torn, kept.
	MachineCrashes int    `json:"machine_crashes,omitempty"`
	Volatile       [4]int `json:"machine_lost_reverted_torn_kept,omitempty"`
	Recoveries     int    `json:"recoveries"`
	Migrations     int    `json:"migrations"`
	Cuts           int    `json:"cuts"`
	Cycles         int    `json:"cycles,omitempty"`
	CyclesMerged   int    `json:"cycles_merged,omitempty"`
	CyclesDeleted  int    `json:"cycles_deleted,omitempty"`
	MergeRetries   int    `json:"merge_retries,omitempty"`
	// LifeMarks are the lifetime workload's progress marks (one seed's:
	// the last seed's that has any).
	LifeMarks []workload.LifeMark `json:"life_marks,omitempty"`
	// The lifetime workload's long-lived feature branch, summed over the
	// seeds: commits on it, merges into main, merges of main into it,
	// merge-base reads, lifetime seeds (any cycle begun) and those whose
	// final merge and delete succeeded; and the largest Report.MergeBases
	// of any collection.
	FeatureCommits int `json:"feature_commits,omitempty"`
	FeatureMerges  int `json:"feature_merges,omitempty"`
	FeatureSyncs   int `json:"feature_syncs,omitempty"`
	FeatureBases   int `json:"feature_bases,omitempty"`
	LifetimeSeeds  int `json:"lifetime_seeds,omitempty"`
	FeatureFinals  int `json:"feature_finals,omitempty"`
	MaxMergeBases  int `json:"max_merge_bases,omitempty"`
	// FinalCollects is the most bounded collections any seed's janitor
	// ran, the feature branch live, before one completed.
	FinalCollects int `json:"final_collects,omitempty"`
	// The riding budget (format 11, Scenario.Riding), summed over the
	// seeds of workloads that choose one: seeds with a budget below the
	// format's maxima, rounds redone over the budget, distinct table
	// versions that rode and that spilled to objects, and manifests
	// pinning both kinds.
	RidingBudgeted int `json:"riding_budgeted_seeds,omitempty"`
	RidingRedone   int `json:"riding_rounds_redone,omitempty"`
	RidingRode     int `json:"riding_versions_rode,omitempty"`
	RidingSpilled  int `json:"riding_versions_spilled,omitempty"`
	RidingMixed    int `json:"riding_manifests_mixed,omitempty"`
	// Index chunks left on the stores by payload form (format 12 writes
	// binary, a quarter of the simulated processes JSON), and the seeds
	// whose store holds both.
	ChunksJSON    int      `json:"index_chunks_json,omitempty"`
	ChunksBinary  int      `json:"index_chunks_binary,omitempty"`
	ChunksMixed   int      `json:"index_chunk_mixed_seeds,omitempty"`
	LinChecks     int      `json:"lin_checks"`
	LinUnknown    int      `json:"lin_unknown"`
	Violations    int      `json:"violations"`
	Deterministic *bool    `json:"deterministic,omitempty"`
	TraceHash     string   `json:"trace_hash,omitempty"`
	SimSeconds    float64  `json:"sim_seconds"`
	WallSeconds   float64  `json:"wall_seconds"`
	FailingSeeds  []uint64 `json:"failing_seeds"`

	// Extras.
	SimWallRatio   float64 `json:"sim_wall_ratio"`
	SeedsPerMinute float64 `json:"seeds_per_minute"`
	Parallel       int     `json:"parallel"`
	Workload       string  `json:"workload"`
	Faults         string  `json:"faults"`
	Store          string  `json:"store"`
	Scale          float64 `json:"scale,omitempty"` // -scale on a real store (none in a simulated run)
	Plant          string  `json:"plant,omitempty"`
	Reads          int     `json:"reads"`
	Resolved       int     `json:"sidecars_resolved_quiescent"`
	// ModelReads and ModelUnmodelled: data reads compared with the
	// reference data model, and those at commits it cannot explain.
	ModelReads      int            `json:"model_reads,omitempty"`
	ModelUnmodelled int            `json:"model_unmodelled,omitempty"`
	ViolationKinds  map[string]int `json:"violation_kinds,omitempty"`
	FirstViolation  string         `json:"first_violation,omitempty"`

	// The process harness (-procs) only. There, crashes counts the SIGKILLs
	// too and recoveries the operations recovery audited (R/audit/).
	Procs            int   `json:"procs,omitempty"`
	Kills            int   `json:"kills,omitempty"`
	Restarts         int   `json:"restarts,omitempty"`
	RecoveringOpens  int   `json:"recovering_opens,omitempty"`
	TornRecords      int   `json:"torn_records,omitempty"`
	FaultCalls       int64 `json:"fault_store_calls,omitempty"`
	FaultTransient   int64 `json:"faults_transient,omitempty"`
	FaultLostAcks    int64 `json:"faults_lost_acks,omitempty"`
	FaultOutageReads int64 `json:"faults_outage_reads,omitempty"`
	// Verify is internal/verify's (graphkernel verify's) verdict on the
	// final store, run after every -procs run; each problem is a violation.
	Verify         string `json:"verify,omitempty"`
	VerifyProblems int    `json:"verify_problems,omitempty"`
	// IndexFanout is the -index-fanout of the processes' data handles (0:
	// the kernel's shapes); unset for the mix workload, whose writers
	// write no data plane.
	IndexFanout *int `json:"index_fanout,omitempty"`
	// The trees of the final store (format 10, counted after verify), over
	// TreesOver ("retained history"; "live heads" for the mix workload,
	// whose writers write no data plane): the table versions the retained
	// manifests of every live branch pin (each once; the heads' only) and
	// those of them listing an index direction or their
	// fragments through ref chunks; the distinct index and fragment ref
	// chunks (level >= 1) under them and the most levels of ref chunks
	// above one version's level-0 chunks; the live heads, the table
	// versions they pin and those of them with a tree.
	TreesOver           string `json:"trees_over,omitempty"`
	PinnedTableVersions int    `json:"pinned_table_versions,omitempty"`
	TreeTableVersions   int    `json:"tree_table_versions,omitempty"`
	IndexRefChunks      int    `json:"index_ref_chunks,omitempty"`
	FragmentRefChunks   int    `json:"fragment_ref_chunks,omitempty"`
	IndexTreeLevels     int    `json:"index_tree_levels,omitempty"`
	FragmentTreeLevels  int    `json:"fragment_tree_levels,omitempty"`
	LiveHeads           int    `json:"live_heads,omitempty"`
	HeadTableVersions   int    `json:"head_table_versions,omitempty"`
	HeadTreeVersions    int    `json:"head_tree_versions,omitempty"`
	// Collections counts successful collections: the maintenance
	// processes' (-procs -workload maint) or the simulated gcollect ops'.
	Collections int `json:"collections,omitempty"`
	// The maintenance workload (-workload maint) only.
	CollectDeleted int `json:"collect_deleted,omitempty"`
	PinReads       int `json:"pin_reads,omitempty"`
	FeedChanges    int `json:"feed_changes,omitempty"`
	FeedGaps       int `json:"feed_gaps,omitempty"`
	// SchemaChanges counts the maintainers' acknowledged schema changes
	// (a property added to main's Item type), each checked on main's
	// final schema.
	SchemaChanges int `json:"schema_changes,omitempty"`
	// GroupedCommits counts the group writer's acknowledged inserts that
	// were published in a group of more than one member (group commit,
	// data.GroupOptions), each checked on main like any insert.
	GroupedCommits int `json:"grouped_commits,omitempty"`
	// The schema workload (-procs -workload schema) only: acknowledged
	// writes (Commits less SchemaChanges), type renames and property
	// renames (of SchemaChanges), and writes refused with
	// *kernel.SchemaChangedError because a schema change landed inside
	// their transaction (each retried once, as a fresh one).
	Writes       int `json:"writes,omitempty"`
	TypeRenames  int `json:"type_renames,omitempty"`
	PropRenames  int `json:"prop_renames,omitempty"`
	StaleRefused int `json:"stale_refused,omitempty"`
}

// summarize adds up the outcomes. trace_hash is set only for a single seed.
func summarize(c *config, outs []outcome, wall time.Duration, single bool) *Summary {
	s := &Summary{Seeds: len(outs), WallSeconds: wall.Seconds(), FailingSeeds: []uint64{}, Parallel: c.parallel,
		Workload: c.workload, Faults: c.faults, Store: c.store, Plant: c.plant}
	if c.store != "sim" {
		s.Scale = c.scale
	}
	for _, o := range outs {
		r := o.res
		s.Ops += r.Ops
		s.Commits += r.Commits
		s.FaultsInjected += r.FaultsInjected
		s.Crashes += r.Crashes
		s.MachineCrashes += r.MachineCrashes
		for i, n := range r.Volatile {
			s.Volatile[i] += n
		}
		s.Recoveries += r.Recoveries
		s.Migrations += r.Migrations
		s.Cuts += r.Cuts
		s.Cycles += r.Cycles
		s.CyclesMerged += r.CyclesMerged
		s.CyclesDeleted += r.CyclesDeleted
		s.MergeRetries += r.MergeRetries
		s.Collections += r.Collections
		if len(r.LifeMarks) > 0 {
			s.LifeMarks = r.LifeMarks
		}
		s.FeatureCommits += r.Feature.Commits
		s.FeatureMerges += r.Feature.Merges
		s.FeatureSyncs += r.Feature.Syncs
		s.FeatureBases += r.Feature.Bases
		if r.Cycles > 0 {
			s.LifetimeSeeds++
		}
		if r.Feature.Final {
			s.FeatureFinals++
		}
		s.MaxMergeBases = max(s.MaxMergeBases, r.Feature.MaxMergeBases)
		s.FinalCollects = max(s.FinalCollects, r.Feature.FinalCollects)
		if r.Riding.Budgeted {
			s.RidingBudgeted++
		}
		s.RidingRedone += r.Riding.Redone
		s.RidingRode += r.Riding.Rode
		s.RidingSpilled += r.Riding.Spilled
		s.RidingMixed += r.Riding.Mixed
		s.ChunksJSON += r.ChunkForms.JSON
		s.ChunksBinary += r.ChunkForms.Binary
		if r.ChunkForms.JSON > 0 && r.ChunkForms.Binary > 0 {
			s.ChunksMixed++
		}
		s.LinChecks += r.LinChecks
		s.LinUnknown += r.LinUnknown
		s.Reads += r.Reads
		s.Resolved += r.Resolved
		s.ModelReads += r.ModelReads
		s.ModelUnmodelled += r.ModelUnmodelled
		s.SimSeconds += r.SimTime.Seconds()
		s.Violations += len(r.Violations)
		if r.Failed() {
			s.FailingSeeds = append(s.FailingSeeds, o.seed)
			if s.ViolationKinds == nil {
				s.ViolationKinds = map[string]int{}
				s.FirstViolation = fmt.Sprintf("seed %d: %s", o.seed, r.Violations[0])
			}
			for _, v := range r.Violations {
				s.ViolationKinds[v.Check]++
			}
		}
	}
	if single && len(outs) == 1 && c.store == "sim" {
		s.TraceHash = hex.EncodeToString(outs[0].res.TraceHash[:])
	}
	if wall > 0 {
		s.SimWallRatio = s.SimSeconds / wall.Seconds()
		s.SeedsPerMinute = float64(s.Seeds) / wall.Minutes()
	}
	return s
}

func writeJSON(w io.Writer, s *Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeTable prints the human summary.
func writeTable(w io.Writer, s *Summary) {
	if s.Procs > 0 {
		writeProcsTable(w, s)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\n", k, v) }
	row("workload", fmt.Sprintf("%s (faults %s, store %s)", s.Workload, s.Faults, s.Store))
	if s.Plant != "" {
		row("planted bug", s.Plant)
	}
	row("seeds", s.Seeds)
	row("ops", s.Ops)
	row("commits (acknowledged)", s.Commits)
	row("reads", s.Reads)
	if s.ModelReads+s.ModelUnmodelled > 0 {
		row("data reads vs model", fmt.Sprintf("%d compared with the reference data model (%d at commits it cannot explain)", s.ModelReads, s.ModelUnmodelled))
	}
	row("faults injected", s.FaultsInjected)
	row("crashes", s.Crashes)
	if s.MachineCrashes > 0 {
		row("machine crashes", fmt.Sprintf("%d (volatile objects: %d lost, %d reverted, %d torn, %d kept)",
			s.MachineCrashes, s.Volatile[0], s.Volatile[1], s.Volatile[2], s.Volatile[3]))
	}
	row("recoveries", fmt.Sprintf("%d (restarted processes' recovering opens; %d sidecars left to the quiescent sweep)", s.Recoveries, s.Resolved))
	row("migrations", s.Migrations)
	row("cuts", s.Cuts)
	if s.Cycles > 0 {
		row("lifetime cycles", fmt.Sprintf("%d begun, %d merged into main (%d merges retried), %d branches deleted; %d collections",
			s.Cycles, s.CyclesMerged, s.MergeRetries, s.CyclesDeleted, s.Collections))
		row("lifetime feature branch", fmt.Sprintf("%d commits, %d merges into main, %d merges of main into it, %d merge-base reads; final merge and delete in %d of %d lifetime seeds (after ≤ %d bounded collections); collections' merge bases ≤ %d",
			s.FeatureCommits, s.FeatureMerges, s.FeatureSyncs, s.FeatureBases, s.FeatureFinals, s.LifetimeSeeds, s.FinalCollects, s.MaxMergeBases))
		for _, m := range s.LifeMarks {
			row("  lifetime mark", fmt.Sprintf("%d cycles ended at sim %v: %d requests, %d keys; %d collections (%d incomplete), merge bases ≤ %d since the last mark",
				m.Cycles, m.SimTime.Round(time.Second), m.Requests, m.Keys, m.Collections, m.Incomplete, m.MergeBases))
		}
	}
	if s.RidingBudgeted+s.RidingRode > 0 {
		row("riding budget", fmt.Sprintf("%d seeds under a small budget: %d rounds redone over it, %d versions spilled to objects, %d rode; %d manifests mixing both",
			s.RidingBudgeted, s.RidingRedone, s.RidingSpilled, s.RidingRode, s.RidingMixed))
	}
	if s.ChunksJSON+s.ChunksBinary > 0 {
		row("index chunks", fmt.Sprintf("%d JSON, %d binary; %d seeds left both", s.ChunksJSON, s.ChunksBinary, s.ChunksMixed))
	}
	row("linearizability checks", fmt.Sprintf("%d (%d unknown)", s.LinChecks, s.LinUnknown))
	row("violations", s.Violations)
	if s.Deterministic != nil {
		row("deterministic", *s.Deterministic)
	}
	if s.TraceHash != "" {
		row("trace hash", s.TraceHash)
	}
	row("simulated time", fmt.Sprintf("%.0fs", s.SimSeconds))
	row("wall time", fmt.Sprintf("%.1fs on %d workers", s.WallSeconds, s.Parallel))
	row("sim/wall ratio", fmt.Sprintf("%.0fx", s.SimWallRatio))
	row("seeds per minute", fmt.Sprintf("%.0f", s.SeedsPerMinute))
	tw.Flush()
	if len(s.FailingSeeds) == 0 {
		fmt.Fprintln(w, "result: clean")
		return
	}
	fmt.Fprintf(w, "result: FAILED on %d seeds %v\n", len(s.FailingSeeds), s.FailingSeeds)
	writeViolationKinds(w, s)
	tags, pl := "", ""
	if s.Plant != "" {
		tags, pl = " -tags simplant", " -plant "+s.Plant
	}
	fmt.Fprintf(w, "replay: go run%s ./cmd/simrun -workload %s -faults %s -seed %d%s%s -out DIR\n", tags, s.Workload, s.Faults, s.FailingSeeds[0], storeFlags(s.Store, s.Scale), pl)
}

// storeFlags are the flags that replay a seed on the store it ran on:
// none for the simulator, -store and -scale for a real store (without
// them a replay runs the simulator, which may well pass).
func storeFlags(store string, scale float64) string {
	if store == "sim" || store == "" {
		return ""
	}
	return fmt.Sprintf(" -store %s -scale %s", store, strconv.FormatFloat(scale, 'g', -1, 64))
}

// writeProcsTable prints the process harness's summary.
func writeProcsTable(w io.Writer, s *Summary) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\n", k, v) }
	fanout := "n/a: no data plane"
	switch {
	case s.IndexFanout == nil:
	case *s.IndexFanout > 0:
		fanout = fmt.Sprint(*s.IndexFanout)
	default:
		fanout = "the kernel's shapes"
	}
	row("processes", fmt.Sprintf("%d (workload %s, store %s, faults %s, index fanout %s)", s.Procs, s.Workload, s.Store, s.Faults, fanout))
	row("kills (SIGKILL)", s.Kills)
	row("restarts", fmt.Sprintf("%d (%d recovering opens recorded)", s.Restarts, s.RecoveringOpens))
	row("recoveries", fmt.Sprintf("%d operations audited by recovery (%d sidecars left to the final sweep)", s.Recoveries, s.Resolved))
	row("faults injected", fmt.Sprintf("%d (transient %d, lost acks %d, outage reads %d; %d store calls; a killed writer's counts since its last return are lost)",
		s.FaultsInjected, s.FaultTransient, s.FaultLostAcks, s.FaultOutageReads, s.FaultCalls))
	row("ops", s.Ops)
	row("commits (acknowledged)", s.Commits)
	row("reads", s.Reads)
	row("torn history records", s.TornRecords)
	if s.Workload == maintWorkload {
		row("maintenance", fmt.Sprintf("%d collections deleted %d objects; %d pinned snapshots read back; feed: %d inserts, %d gaps; %d schema changes; %d grouped commits",
			s.Collections, s.CollectDeleted, s.PinReads, s.FeedChanges, s.FeedGaps, s.SchemaChanges, s.GroupedCommits))
	} else if s.Workload == schemaProcWorkload {
		row("schema changes", fmt.Sprintf("%d acknowledged (%d type renames, %d property renames) beside %d acknowledged writes; %d writes refused with SchemaChangedError (staged under a schema since changed)",
			s.SchemaChanges, s.TypeRenames, s.PropRenames, s.Writes, s.StaleRefused))
	} else {
		row("linearizability checks", fmt.Sprintf("%d (%d unknown)", s.LinChecks, s.LinUnknown))
	}
	row("verify", s.Verify)
	if s.TreesOver != "" {
		row("trees", fmt.Sprintf("%d index ref chunks (≤ %d levels), %d fragment ref chunks (≤ %d levels) under %d of the %d table versions of the live branches' %s; %d of the %d pinned by the %d live heads",
			s.IndexRefChunks, s.IndexTreeLevels, s.FragmentRefChunks, s.FragmentTreeLevels, s.TreeTableVersions, s.PinnedTableVersions, s.TreesOver,
			s.HeadTreeVersions, s.HeadTableVersions, s.LiveHeads))
	}
	row("violations", s.Violations)
	row("wall time", fmt.Sprintf("%.1fs", s.WallSeconds))
	tw.Flush()
	if s.Violations == 0 {
		fmt.Fprintln(w, "result: clean")
		return
	}
	fmt.Fprintf(w, "result: FAILED with %d violations\n", s.Violations)
	writeViolationKinds(w, s)
}

// writeViolationKinds prints the count of each violation kind, sorted, and
// the first violation.
func writeViolationKinds(w io.Writer, s *Summary) {
	kinds := make([]string, 0, len(s.ViolationKinds))
	for k := range s.ViolationKinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(w, "  %-28s %d\n", k, s.ViolationKinds[k])
	}
	fmt.Fprintf(w, "first: %s\n", s.FirstViolation)
}

// Package workload holds the simulator's workloads, the runner that plays a
// scenario in a simulated world (or on a real store), and the shrinker.
//
// A Scenario is the replayable unit: a workload name, a seed, a fault
// profile, the two phase lengths and every simulated process's program of
// operations. It round-trips through a small text form (case files):
//
//	simcase v1
//	workload core
//	seed 11
//	faults heavy
//	phases 5s 1m0s
//	actor w0
//	  300ms commit branch=main strict=1 tables=t0
//	actor x clock=-10m0s
//	  300ms reopen
//
// An actor line may set its host clock's offset from the world's
// (ActorPlan.Clock): its kernel and maintenance handles read the world's
// time plus the offset, its checkers the world's.
//
// Execute plays a scenario: an init process creates the graph (or a
// workload's fixture, such as a v3 graph), each actor becomes a process that
// opens the graph and runs its operations until the quiet phase, a crashed
// process restarts (reopen, which recovers) and resumes after the operation
// it crashed in (a service's actors all restart, service.go), writers make one last commit in the quiet phase that must
// be acknowledged, and a janitor resolves every sidecar once everyone else
// ended. Then the checkers run: the structural ones of package check on the
// durable state, the workload's own, and porcupine on the recorded history.
//
// # Workloads
//
//	core        writers on main and side branches, readers, snapshots, a brancher
//	contention  many writers racing on main (the publish retry loop)
//	data        typed data-plane transactions, @card and dangling-edge checks
//	data-drops  data plus cascading deletes racing new edges to the deleted
//	data-group  group commit: a service's actors share one data handle
//	            (their ops carry svc=NAME) and die whole on a crash
//	migrate     concurrent migrators over a v3 fixture, lineage preserved
//	cuts        the recovery issue's exhaustive crash-cut sweep
//	mix         the default soak: a rotation of all of the above by seed
//
// A new workload registers itself (Register) with a generator, the planted
// bugs it must catch, and optional hooks (Contract, Seed, Fixture, Final,
// Run); a new operation kind registers with RegisterOp. Both are then
// available to simrun, case files, the shrinker and the fuzz target.
package workload

// Package migrate holds the pure side of graphkernel's on-store format
// migrations and the v3 legacy test support:
//
//   - Lineage: an indexed, immutable view of one branch incarnation's v3
//     legacy lineage (the v3 head rule, newest-first order for history
//     walks, lookup by id);
//   - PlanFold: the v3->v4 lineage fold of one branch incarnation, built as
//     ONE manifest (format stamp 4, table pins unchanged, every legacy commit
//     in ascending id order, then the head) that the kernel publishes
//     create-only. Backfill, head and stamp land together, so the stamp can
//     never be visible without the lineage ("stamp last", strictly);
//   - WriteV3Fixture: a writer of v3 graphs (manifests without lineage plus
//     separate legacy commit objects, branches, merges, lost second writes),
//     kept as test support for the kernel tests and the simulator.
//
// Nothing here reads a clock, global randomness or the environment; the
// fixture writer takes its time and entropy from its spec. The kernel does
// every I/O of a migration itself (kernel/migration.go).
package migrate

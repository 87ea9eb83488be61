// Package kernel is graphkernel's storage kernel: a versioned, branchable
// set of tables on an object store, where every change becomes visible
// through one create-only manifest write (the publish) that carries its
// commit lineage inside it.
//
// A short tour:
//
//	g, _ := kernel.Init(ctx, store, "graphs/g1", schema, kernel.Options{Env: env})
//	main, _ := g.Branch(ctx, "main")
//	c, _ := g.Write(ctx, main, []kernel.TableWrite{{
//		Table: "people",
//		Build: func(pinned kernel.TableVersion) (kernel.TableContent, error) {
//			return kernel.TableContent{Fragments: append(pinned.Fragments, "frag-1"), Rows: pinned.Rows + 10}, nil
//		},
//	}}, kernel.LineageIntent{Actor: "etl", Message: "load people"})
//	snap, _ := g.SnapshotAtCommit(ctx, c.ID) // immutable: later commits never change it
//	feature, _ := g.CreateBranch(ctx, "feature", main)
//
// Layering: kernel/format holds the pure codecs and key layout, and
// kernel/lineage the pure decisions (expectations, parents, next manifest,
// merge base), kernel/branchindex those of bounded branch listing and the
// dependents check (fork markers); this package does the I/O around them. It reads no wall
// clock, global random source or environment and starts no goroutines: time,
// entropy and failpoints come in through Env. The on-store format is
// documented in docs/format.md.
package kernel

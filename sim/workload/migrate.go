package workload

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/migrate"
	"github.com/graphkernel/graphkernel/sim/check"
)

func init() {
	Register(&Workload{
		Name: "migrate",
		Doc: "concurrent migrators opening a v3 graph (main migrates on a read-write open, other branches on " +
			"their first write) while writing and reading, crashing at migration failpoints; lineage must be preserved",
		Generate:    genMigrate,
		Plants:      []string{plant.StampFirst},
		Fixture:     writeFixture,
		Final:       finalMigrate,
		BuggifyFire: 0.3,
	})
}

// fixtureBranches are the branches of every v3 fixture.
var fixtureBranches = []string{"main", "feature"}

// fixtureSpec builds the seed's v3 graph: commits on main and on a forked
// branch, a lost second write, a merge and a stray legacy commit.
func fixtureSpec(seed uint64, entropy func() *rand.Rand, start time.Time) migrate.FixtureSpec {
	rng := rand.New(rand.NewPCG(seed, 0x7633)) // "v3"
	ops := []migrate.FixtureOp{{Kind: migrate.OpCommit, Branch: "main", Actor: "v3-ann", Message: "m1", Tables: []string{"t0"}}}
	ops = append(ops, migrate.FixtureOp{Kind: migrate.OpFork, Branch: "feature", From: "main"})
	for i := 0; i < 2+rng.IntN(6); i++ {
		b := fixtureBranches[rng.IntN(2)]
		op := migrate.FixtureOp{Kind: migrate.OpCommit, Branch: b, Actor: "v3-" + b, Message: fmt.Sprintf("v3 %s %d", b, i),
			Tables: []string{sharedTables[rng.IntN(len(sharedTables))]}, LoseCommit: rng.IntN(5) == 0}
		ops = append(ops, op)
	}
	ops = append(ops, migrate.FixtureOp{Kind: migrate.OpCommit, Branch: "feature", Actor: "v3-cat", Message: "f", Tables: []string{"t1"}})
	if rng.IntN(2) == 0 {
		ops = append(ops, migrate.FixtureOp{Kind: migrate.OpMerge, Branch: "main", From: "feature", Actor: "v3-ann", Message: "merge"})
	}
	if rng.IntN(2) == 0 {
		ops = append(ops, migrate.FixtureOp{Kind: migrate.OpStray, Branch: "feature", Actor: "v3-zed", Message: "stray"})
	}
	return migrate.FixtureSpec{Schema: SchemaContract, Entropy: entropyReader{entropy()}, Start: start,
		Unstamped: rng.IntN(3) == 0, Ops: ops}
}

// entropyReader reads bytes from a seeded PRNG.
type entropyReader struct{ r *rand.Rand }

func (e entropyReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e.r.Uint32())
	}
	return len(p), nil
}

// writeFixture is the migrate workload's setup: it writes the seed's v3
// graph and keeps what it wrote to compare the migrated history with.
func writeFixture(p *Proc) error {
	spec := fixtureSpec(p.run.S.Seed, func() *rand.Rand { return rand.New(rand.NewPCG(p.run.S.Seed, 0x66697874)) }, p.run.clock.Now())
	fx, err := migrate.WriteV3Fixture(p.Ctx(), p.run.Store, p.run.Root, spec)
	if err != nil {
		return err
	}
	p.run.fixture = &fx
	return nil
}

// finalMigrate runs in the janitor once everyone else ended: one commit on
// every fixture branch (a first write migrates a branch), then every branch
// head must be stamped current and every branch must still show its whole
// legacy history below its new commits.
func finalMigrate(p *Proc) error {
	fx := p.run.fixture
	if fx == nil {
		return nil // the fixture never got written: init's failure is reported
	}
	for _, b := range fixtureBranches {
		acked := false
		for attempt := 0; attempt < maxFinalAttempts && !acked; attempt++ {
			out, err := p.Commit(fmt.Sprintf("%s.stamp-%s%d", p.name, b, attempt), b, []string{"fin_" + b}, false)
			if err != nil {
				return err
			}
			acked = out.acked
		}
		if !acked {
			p.run.Violate(check.Violation{Check: "liveness", Detail: "janitor could not commit on " + b})
		}
	}
	for _, b := range fixtureBranches {
		if err := p.checkLineage(fx, b); err != nil {
			return err
		}
	}
	return nil
}

// checkLineage compares branch's history, minus the commits made after the
// migration, with the fixture's legacy history.
func (p *Proc) checkLineage(fx *migrate.Fixture, branch string) error {
	want, err := fx.History(branch)
	if err != nil {
		p.run.Violate(check.Violation{Check: "lineage", Detail: err.Error()})
		return nil
	}
	ref, err := p.g.Branch(p.Ctx(), branch)
	if err != nil {
		return p.readFailed("lineage: branch", err)
	}
	var got []format.ID
	cursor := kernel.LogCursor("")
	for page := 0; page < maxLogPages; page++ {
		lp, err := p.g.Log(p.Ctx(), ref, cursor, logPageSize)
		if err != nil {
			return p.readFailed("lineage: log", err)
		}
		for _, c := range lp.Commits {
			if _, ours := check.TagsOf(c.Message); !ours && c.Kind != format.KindRecovery {
				got = append(got, c.ID)
			}
		}
		if cursor = lp.Next; cursor == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		p.run.Violate(check.Violation{Check: "lineage", Detail: fmt.Sprintf(
			"%s: legacy history after migration is %s, want %s", branch, idList(got), idList(want))})
	}
	return nil
}

func idList(ids []format.ID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()[20:] // the random tail is enough to tell them apart
	}
	return "[" + strings.Join(s, " ") + "]"
}

var migrateShape = shape{faultPhase: 4 * time.Minute, quietPhase: time.Minute}

// genMigrate: migrators that open the v3 graph at once, then commit on main
// and on the feature branch, read, and reopen.
func genMigrate(seed uint64, faults string) *Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x6d696772)) // "migr"
	s := &Scenario{Workload: "migrate", Seed: seed, Faults: faults, FaultPhase: migrateShape.faultPhase, QuietPhase: migrateShape.quietPhase}
	think := [2]time.Duration{time.Second, 6 * time.Second}
	for i, n := 0, 3+rng.IntN(4); i < n; i++ {
		a := ActorPlan{Name: fmt.Sprintf("m%d", i)}
		for k := opsFor(migrateShape, think); k > 0; k-- {
			b := fixtureBranches[rng.IntN(len(fixtureBranches))]
			op := Op{Think: think[0] + time.Duration(rng.Int64N(int64(think[1]-think[0]))), Args: map[string]string{"branch": b}}
			switch x := rng.Float64(); {
			case x < 0.5:
				op.Kind, op.Args["tables"] = "commit", sharedTables[rng.IntN(len(sharedTables))]
			case x < 0.85:
				op.Kind, op.Args["tables"] = "read", strings.Join(sharedTables, ",")
			default:
				op.Kind, op.Args = "reopen", map[string]string{}
			}
			a.Ops = append(a.Ops, op)
		}
		s.Actors = append(s.Actors, a)
	}
	return s
}

package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
)

// crashWrite leaves an abandoned write: a counter-named transaction (format
// 7's writes, kernel.Options.CounterWrites) that crashes just before its
// publish, so its sidecar stays and its table HEAD moved.
func (f *fixture) crashWrite() {
	f.t.Helper()
	ctx := context.Background()
	fps := failpoint.NewSet()
	fps.Arm(failpoint.BeforePublish, failpoint.Action{Kind: failpoint.Crash, Times: 1})
	env := f.env
	env.Failpoints = fps
	g, err := data.Open(ctx, f.store, testRoot, data.Options{Kernel: kernel.Options{Env: env, CounterWrites: true}})
	if err != nil {
		f.t.Fatal(err)
	}
	b, _ := g.Branch(ctx, "main")
	tx, err := g.Begin(ctx, b)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := tx.Insert("Person", person("p7", "Gus")); err != nil {
		f.t.Fatal(err)
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "crasher", Message: "lost write"}); !errors.Is(err, failpoint.ErrCrashed) {
		f.t.Fatalf("commit: %v, want a crash", err)
	}
}

// TestRecover: verify lists the abandoned write's sidecar with its age
// (pending is not a problem); recover within the lease leaves it; recover
// --ignore-lease rolls it forward and prints the decision and the audit;
// the log marks the recovery commit.
func TestRecover(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			f.buildGraph()
			f.crashWrite()
			f.clock.Advance(5 * time.Second)

			code, r := f.verify()
			if code != 0 || len(r.Sidecars) != 1 || r.Sidecars[0].PastLease || r.Sidecars[0].AgeSeconds < 5 || r.Sidecars[0].Tables[0] != "Person" {
				t.Fatalf("verify with a pending sidecar: exit %d, %+v", code, r)
			}
			if out := f.mustRun(0, "verify", f.spec, testRoot); !strings.Contains(out, "pending sidecar") {
				t.Fatalf("verify text does not list the sidecar:\n%s", out)
			}

			var rep recoverJSON
			decodeJSON(t, f.mustRun(0, "recover", f.spec, testRoot, "--json"), &rep)
			if rep.Pending != 1 || rep.Young != 1 || rep.Ops[0].Decision != "left" {
				t.Fatalf("recover within the lease: %+v", rep)
			}
			out := f.mustRun(0, "recover", f.spec, testRoot, "--ignore-lease")
			if !strings.Contains(out, "roll-forward") || !strings.Contains(out, "Person: pinned") || !strings.Contains(out, "resolved 1") {
				t.Fatalf("recover --ignore-lease:\n%s", out)
			}
			var log []commitJSON
			decodeJSON(t, f.mustRun(0, "log", f.spec, testRoot, "-n", "1", "--json"), &log)
			if log[0].Kind != "recovery" || log[0].Marks[0] != "recovery" || log[0].Actor != kernel.RecoveryActor {
				t.Fatalf("log head after recovery: %+v", log[0])
			}
			if code, r := f.verify(); code != 0 || len(r.Sidecars) != 0 {
				t.Fatalf("verify after recovery: exit %d, %+v", code, r)
			}
		})
	}
}

package kernel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// refuseStore fails every Put under prefix with an unambiguous error of
// kind, counting those attempts; everything else passes through.
type refuseStore struct {
	objstore.Store
	prefix string
	kind   error
	puts   int
}

func (s *refuseStore) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	if strings.HasPrefix(key, s.prefix) {
		s.puts++
		return "", objstore.NewError(objstore.OpPut, key, s.kind, errors.New("test: refused"))
	}
	return s.Store.Put(ctx, key, data, cond)
}

// A store that refuses the manifest write for good (ErrRejected) ends a
// publish, and a Write, at once: one attempt, no backoff, the refusal
// wrapped and matchable. The ErrTransient control shows the same harness
// does see retries: the whole budget is spent and ends in a ContentionError.
func TestRejectedManifestWriteIsFinal(t *testing.T) {
	const budget = 5
	ops := []struct {
		name string
		run  func(g *kernel.Graph, b kernel.BranchRef) error
	}{
		{"Publish", func(g *kernel.Graph, b kernel.BranchRef) error {
			_, err := g.Publish(ctx, b, nil, kernel.LineageIntent{Actor: "t"}, nil)
			return err
		}},
		{"Write", func(g *kernel.Graph, b kernel.BranchRef) error {
			_, err := g.Write(ctx, b, []kernel.TableWrite{{Table: "a", Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
				return kernel.TableContent{Fragments: []string{"f"}, Rows: 1}, nil
			}}}, kernel.LineageIntent{Actor: "t"})
			return err
		}},
	}
	kinds := []struct {
		kind     error
		attempts int
		final    bool // the refusal itself is returned, not a ContentionError
	}{
		{objstore.ErrRejected, 1, true},
		{objstore.ErrTransient, budget, false},
	}
	for _, op := range ops {
		for _, k := range kinds {
			t.Run(op.name+"/"+k.kind.Error(), func(t *testing.T) {
				inner := sim.New(sim.Config{Seed: 1})
				mustInit(t, inner, 1)
				store := &refuseStore{Store: inner, prefix: format.NewKeys(root).BranchPrefix("main"), kind: k.kind}
				env := testEnv(2)
				g, err := kernel.Open(ctx, store, root, kernel.Options{Env: env, RetryBudget: budget})
				if err != nil {
					t.Fatal(err)
				}
				b := mustBranch(t, g, "main")
				start := env.Clock.Now()
				err = op.run(g, b)
				if store.puts != k.attempts {
					t.Fatalf("%d manifest write attempts, want %d (err %v)", store.puts, k.attempts, err)
				}
				if !errors.Is(err, k.kind) {
					t.Fatalf("got %v, want it to wrap %v", err, k.kind)
				}
				if k.final {
					if errors.Is(err, kernel.ErrContention) || objstore.IsRetryable(err) || !env.Clock.Now().Equal(start) {
						t.Fatalf("got %v after %v of backoff, want the bare refusal with no backoff", err, env.Clock.Now().Sub(start))
					}
					return
				}
				if !errors.Is(err, kernel.ErrContention) {
					t.Fatalf("got %v, want a ContentionError after the budget", err)
				}
			})
		}
	}
}

package kernel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// batchFault is how faultyBatch answers its first PutMany.
type batchFault int

const (
	lostAcks   batchFault = iota // every request applied, every answer ambiguous
	notApplied                   // no request applied, every answer ambiguous
	transient                    // no request applied, every answer a definite retryable failure
)

// faultyBatch is a store with objstore.BatchPutter whose first batch
// fails as fault says; later batches pass through. It records each
// batch's keys.
type faultyBatch struct {
	objstore.Store
	fault   batchFault
	batches [][]string
}

func (s *faultyBatch) PutMany(ctx context.Context, reqs []objstore.PutRequest) []objstore.PutResult {
	var keys []string
	for _, r := range reqs {
		keys = append(keys, r.Key)
	}
	s.batches = append(s.batches, keys)
	if len(s.batches) > 1 {
		return objstore.PutMany(ctx, s.Store, reqs)
	}
	out := make([]objstore.PutResult, len(reqs))
	if s.fault == lostAcks {
		out = objstore.PutMany(ctx, s.Store, reqs)
	}
	for i, r := range reqs {
		if out[i].Err != nil {
			continue
		}
		cause := errors.New("injected batch fault")
		if s.fault == transient {
			out[i] = objstore.PutResult{Err: objstore.NewError(objstore.OpPut, r.Key, objstore.ErrTransient, cause)}
		} else {
			out[i] = objstore.PutResult{Err: objstore.NewAmbiguousError(objstore.OpPut, r.Key, objstore.ErrTransient, cause)}
		}
	}
	return out
}

// TestBatchOutcomesSettledOneByOne: a write round's independent writes go
// out as one objstore.PutMany (format 8: the Build's new object and the
// table version named per attempt together; format 7: the new objects
// before the sidecar), and each request's outcome is settled on its own
// as its single write would be: a lost ack by reading back (the object
// with our bytes, the version with our writer token, is ours), an
// ambiguous write that did not land and a transient failure by writing
// again. The write commits exactly once with its object in place. Red
// without the read-back (a lost ack's rewrite fails its create-only
// condition and the write fails).
func TestBatchOutcomesSettledOneByOne(t *testing.T) {
	for _, counter := range []bool{false, true} {
		for _, fault := range []batchFault{lostAcks, notApplied, transient} {
			name := map[batchFault]string{lostAcks: "lost-acks", notApplied: "not-applied", transient: "transient"}[fault]
			if counter {
				name = "counter/" + name
			} else {
				name = "named/" + name
			}
			t.Run(name, func(t *testing.T) {
				inner := sim.New(sim.Config{Seed: 7})
				g, err := kernel.Init(recCtx, inner, recRoot, []byte("batch\n"), kernel.Options{CounterWrites: counter, NoRiding: true, Env: kerneltest.Env(1, nil)})
				if err != nil {
					t.Fatal(err)
				}
				recMustWrite(t, g, "main", map[string]string{"a": "a0"}, "setup")
				store := &faultyBatch{Store: inner, fault: fault}
				g, err = kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: counter, NoRiding: true, Env: kerneltest.Env(2, nil), SkewMargin: kerneltest.EpochSkewMargin})
				if err != nil {
					t.Fatal(err)
				}
				obj := kernel.NewObject{Key: recRoot + "/data/a/obj-1", Data: []byte("the new fragment")}
				b, err := g.Branch(recCtx, "main")
				if err != nil {
					t.Fatal(err)
				}
				manifests := len(listAllKeys(t, inner, recKeys.BranchPrefix("main")))
				_, err = g.Write(recCtx, b, []kernel.TableWrite{{Table: "a", Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
					return kernel.TableContent{Fragments: append(append([]string(nil), p.Fragments...), "obj-1"), Rows: p.Rows + 1, New: []kernel.NewObject{obj}}, nil
				}}}, kernel.LineageIntent{Actor: "tester", Message: "batched"})
				if err != nil {
					t.Fatalf("write: %v", err)
				}
				if got, err := inner.Get(recCtx, obj.Key); err != nil || string(got.Data) != string(obj.Data) {
					t.Fatalf("object after the write: %q, %v", got.Data, err)
				}
				if n := len(listAllKeys(t, inner, recKeys.BranchPrefix("main"))); n != manifests+1 {
					t.Fatalf("%d manifests after the write, want %d (one commit)", n, manifests+1)
				}
				if st := recState(t, inner); !strings.Contains(st.String(), `fragments=["a0" "obj-1"]`) {
					t.Fatalf("state %s, want table a fragments a0, obj-1", st)
				}
				first := store.batches[0]
				wantFirst := 2 // the object and the named version
				if counter {
					wantFirst = 1 // the object, before the sidecar
				}
				if len(first) != wantFirst || first[0] != obj.Key {
					t.Fatalf("first batch %v, want %d requests starting with the object", first, wantFirst)
				}
			})
		}
	}
}

// listAllKeys lists every key under prefix (at most 10 pages).
func listAllKeys(t *testing.T, s objstore.Store, prefix string) []string {
	t.Helper()
	var keys []string
	after := ""
	for range 10 {
		p, err := s.List(recCtx, prefix, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, p.Keys...)
		if !p.Truncated {
			return keys
		}
		after = p.Keys[len(p.Keys)-1]
	}
	t.Fatalf("more than 10 pages under %s", prefix)
	return nil
}

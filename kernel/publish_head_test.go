package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// A publish or write with LineageIntent.ExpectHead lands only on that head:
// a moved head is *HeadMovedError (retryable) and nothing is published.
// Red without the check in buildNext: the stale publish lands on the new
// head.
func TestExpectHeadRefusesAMovedHead(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	old, err := g.Head(ctx, main)
	if err != nil {
		t.Fatal(err)
	}
	commitTable(t, g, main, "a", "f1")
	moved, _ := g.Head(ctx, main)

	_, err = g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "t", ExpectHead: &old.ID}, nil)
	var hm *kernel.HeadMovedError
	if !errors.As(err, &hm) || !errors.Is(err, kernel.ErrHeadMoved) || hm.Expected != old.ID || hm.Actual != moved.ID {
		t.Fatalf("publish on a moved head: %v, want *HeadMovedError %s -> %s", err, old.ID, moved.ID)
	}
	w := kernel.TableWrite{Table: "a", Strict: false, Build: func(kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Fragments: []string{"f2"}}, nil
	}}
	if _, err := g.Write(ctx, main, []kernel.TableWrite{w}, kernel.LineageIntent{Actor: "t", ExpectHead: &old.ID}); !errors.Is(err, kernel.ErrHeadMoved) {
		t.Fatalf("write on a moved head: %v, want ErrHeadMoved", err)
	}
	if left := kerneltest.Sidecars(store, root); len(left) != 0 {
		t.Fatalf("a write refused for a moved head left sidecars %v", left)
	}
	if now, _ := g.Head(ctx, main); now.ID != moved.ID {
		t.Fatalf("a refused publish moved the head to %s", now.ID)
	}
	c, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "t", ExpectHead: &moved.ID}, nil)
	if err != nil || c.Parents[0] != moved.ID {
		t.Fatalf("publish on the expected head: %+v, %v", c, err)
	}
}

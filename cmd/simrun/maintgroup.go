package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
)

// The maintenance workload's group writer (role roleGroup): one process
// whose handle has group commit on (data.GroupOptions) and whose
// groupCommitters goroutines insert rows on main through that one handle,
// so that their commits queue and are published together, beside the
// other writers' merges, the maintainers' collections and schema changes,
// and SIGKILLs. Every insert is recorded like a writer's (checkMaint: an
// acknowledged one is on main, one that failed definitely is not); an
// acknowledged one records its group's size, and the summary counts those
// published in a group of more than one (Summary.GroupedCommits).
const groupCommitters = 3

// groupOptions are the group writer's group commit options: a short wait
// for more members, so that groups form among its committers.
var groupOptions = data.GroupOptions{Enabled: true, MaxWait: 2 * time.Millisecond, RegroupWait: 5 * time.Millisecond}

// groupLoop runs groupCommitters committers until the process is told to
// stop, and returns the first error one of them met.
func (p *maintProc) groupLoop() error {
	errs := make([]error, groupCommitters)
	var wg sync.WaitGroup
	for i := range groupCommitters {
		wg.Go(func() { errs[i] = p.groupCommitter(i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// groupCommitter is committer i of the group writer: it inserts one row
// on main at a time, recording each call before it and its outcome after.
func (p *maintProc) groupCommitter(i int) error {
	ctx := context.Background()
	for n := 1; !p.stop(); n++ {
		tag := fmt.Sprintf("p%d-s%d-g%d-%d", p.wc.id, p.wc.seg, i, n)
		if err := p.record(histRecord{Kind: recInvoke, Tag: tag, Key: keyMain}); err != nil {
			return err
		}
		size, err := p.insertGrouped(ctx, tag)
		if err != nil {
			if err := p.outcome(tag, err); err != nil {
				return err
			}
			continue
		}
		if err := p.record(histRecord{Kind: recOK, Tag: tag, Group: size}); err != nil {
			return err
		}
	}
	return nil
}

// insertGrouped commits one row with id tag on main through the group
// writer's handle and returns the size of the group it was published in.
func (p *maintProc) insertGrouped(ctx context.Context, tag string) (int, error) {
	b, err := p.g.Branch(ctx, "main")
	if err != nil {
		return 0, err
	}
	tx, err := p.g.Begin(ctx, b)
	if err != nil {
		return 0, err
	}
	if err := tx.Insert(maintType, data.Row{ID: tag, Props: map[string]any{"tag": tag}}); err != nil {
		return 0, err
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: fmt.Sprintf("p%d", p.wc.id), Message: tag}); err != nil {
		return 0, err
	}
	return tx.Group().Size, nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
)

// branchCommand is `branch create|delete`, over the kernel's CreateBranch,
// CreateBranchAt and DeleteBranch.
func branchCommand() command {
	return command{name: "branch", args: "create|delete STORE ROOT NAME", nargs: exactly(4), lead: 1,
		summary: "create a branch (--from REF, default main) or delete one, like git branch / git branch -d",
		notes: "create: the new branch starts at REF (a branch's head, BRANCH@VERSION or a commit id); it copies\n" +
			"no data and adds no commit. Refused if NAME is live already.\n" +
			"delete: publishes a branch-delete commit (nothing is removed from storage; maintain collects it).\n" +
			"Refused for main, for a branch that does not exist, and while live branches were forked from it\n" +
			"(they are named: delete or merge them first).",
		example: "graphkernel branch create fs:/var/lib/graphs g1 feature --from main",
		flags: func(fs *flag.FlagSet, o *opts) {
			fs.StringVar(&o.from, "from", "", "create: start at `REF` (commit id, BRANCH or BRANCH@VERSION; default main)")
		},
		run: runBranch}
}

// branchOpJSON is `branch --json`: what was created or deleted.
type branchOpJSON struct {
	Action      string `json:"action"` // "create" or "delete"
	Branch      string `json:"branch"`
	Incarnation uint64 `json:"incarnation,omitempty"`
	Head        string `json:"head"` // create: the new branch's head; delete: the head it had
	From        string `json:"from,omitempty"`
}

func runBranch(ctx context.Context, a *app, o *opts, pos []string) error {
	action, name := pos[0], pos[3]
	switch action {
	case "create":
	case "delete":
		if o.from != "" {
			return &usageError{"--from is for branch create"}
		}
	default:
		return &usageError{fmt.Sprintf("branch %q: want create or delete", action)}
	}
	g, _, err := a.openGraph(ctx, pos[1], pos[2], true)
	if err != nil {
		return err
	}
	var out branchOpJSON
	if action == "create" {
		out, err = createBranch(ctx, g, name, o.from)
	} else {
		out, err = deleteBranch(ctx, g, name)
	}
	if err != nil {
		return err
	}
	if o.json {
		return a.emitJSON(out)
	}
	if action == "create" {
		fmt.Fprintf(a.stdout, "created branch %s#%d at %s (from %s)\n", out.Branch, out.Incarnation, out.Head, out.From)
	} else {
		fmt.Fprintf(a.stdout, "deleted branch %s (its head was %s)\n", out.Branch, out.Head)
	}
	return nil
}

// createBranch creates name at ref: a live branch's head through
// CreateBranch, any other ref at its commit through CreateBranchAt.
func createBranch(ctx context.Context, g *data.Graph, name, from string) (branchOpJSON, error) {
	if from == "" {
		from = "main"
	}
	k := g.Kernel()
	// Checked first so a refusal writes nothing (the kernel's create writes
	// its name and fork markers before it finds the name live, and stays
	// the authority when two creators race).
	if _, err := g.Branch(ctx, name); err == nil {
		return branchOpJSON{}, fmt.Errorf("create branch %q: %w", name, kernel.ErrBranchExists)
	} else if !errors.Is(err, kernel.ErrBranchNotFound) {
		return branchOpJSON{}, err
	}
	var b kernel.BranchRef
	if _, err := kernel.CommitIDFromString(from); err != nil && !strings.Contains(from, "@") {
		src, err := g.Branch(ctx, from)
		if err != nil {
			return branchOpJSON{}, fmt.Errorf("--from: %w", err)
		}
		if b, err = k.CreateBranch(ctx, name, src); err != nil {
			return branchOpJSON{}, err
		}
	} else {
		s, err := resolveRef(ctx, g, from)
		if err != nil {
			return branchOpJSON{}, fmt.Errorf("--from: %w", err)
		}
		if b, err = k.CreateBranchAt(ctx, name, s.Kernel().Head()); err != nil {
			return branchOpJSON{}, err
		}
	}
	h, err := k.Head(ctx, b)
	if err != nil {
		return branchOpJSON{}, fmt.Errorf("head of the new branch %s: %w", b, err)
	}
	return branchOpJSON{Action: "create", Branch: b.Name(), Incarnation: b.Incarnation(), Head: h.ID.String(), From: from}, nil
}

// deleteBranch deletes name and reports the head it had.
func deleteBranch(ctx context.Context, g *data.Graph, name string) (branchOpJSON, error) {
	k := g.Kernel()
	b, err := g.Branch(ctx, name)
	if err != nil {
		return branchOpJSON{}, err
	}
	h, err := k.Head(ctx, b)
	if err != nil {
		return branchOpJSON{}, fmt.Errorf("head of %s: %w", b, err)
	}
	if err := k.DeleteBranch(ctx, name); err != nil {
		return branchOpJSON{}, err
	}
	return branchOpJSON{Action: "delete", Branch: name, Incarnation: b.Incarnation(), Head: h.ID.String()}, nil
}

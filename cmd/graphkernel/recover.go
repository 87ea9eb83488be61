package main

import (
	"context"
	"fmt"

	"github.com/graphkernel/graphkernel/internal/verify"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// opOutcome is what recovery did with one sidecar that was pending when
// the command started.
type opOutcome struct {
	Op             string           `json:"op"`
	Branch         string           `json:"branch,omitempty"`
	WriterKind     string           `json:"writer_kind,omitempty"`
	Actor          string           `json:"actor,omitempty"`
	Decision       string           `json:"decision"` // roll-forward, roll-back, discard, or "left" (still pending)
	Converged      bool             `json:"converged,omitempty"`
	RecoveryCommit string           `json:"recovery_commit,omitempty"`
	Tables         []auditTableJSON `json:"tables,omitempty"`
}

type auditTableJSON struct {
	Table      string `json:"table"`
	FromPinned uint64 `json:"from_pinned"`
	FromHead   uint64 `json:"from_head"`
	To         uint64 `json:"to"`
}

// recoverJSON is `recover --json`.
type recoverJSON struct {
	IgnoreLease bool        `json:"ignore_lease"`
	Pending     int         `json:"pending_before"`
	Resolved    int         `json:"resolved"`
	Deferred    int         `json:"deferred"`
	Young       int         `json:"young"`
	Unreadable  int         `json:"unreadable"`
	Ops         []opOutcome `json:"ops"`
	Error       string      `json:"error,omitempty"`
}

func runRecover(ctx context.Context, a *app, o *opts, pos []string) error {
	st, err := a.open(ctx, pos[0])
	if err != nil {
		return err
	}
	keys := format.NewKeys(pos[1])
	var ops []format.ID
	if err := verify.ListKeys(ctx, st, keys.SidecarPrefix(), func(k string) error {
		if op, err := keys.ParseSidecarKey(k); err == nil {
			ops = append(ops, op)
		}
		return nil
	}); err != nil {
		return err
	}
	// A read-write open already sweeps sidecars past the lease; Recover
	// then sweeps what is left (all of them with --ignore-lease).
	g, err := data.Open(ctx, st, pos[1], data.Options{Kernel: kernel.Options{Env: a.env}})
	if err != nil {
		return fmt.Errorf("open graph %q (a read-write open runs the recovery sweep): %w", pos[1], err)
	}
	rep, recErr := g.Kernel().Recover(ctx, kernel.RecoverOptions{IgnoreLease: o.ignoreLease})
	out := recoverJSON{IgnoreLease: o.ignoreLease, Pending: len(ops), Resolved: rep.Resolved, Deferred: rep.Deferred,
		Young: rep.Young, Unreadable: rep.Unreadable, Ops: []opOutcome{}}
	if recErr != nil {
		out.Error = recErr.Error()
	}
	for _, op := range ops {
		oc, err := outcomeOf(ctx, st, keys, op)
		if err != nil {
			return err
		}
		out.Ops = append(out.Ops, oc)
	}
	if o.json {
		if err := a.emitJSON(out); err != nil {
			return err
		}
	} else {
		a.printRecover(out)
	}
	if recErr != nil {
		return fmt.Errorf("recover: %w", recErr)
	}
	return nil
}

// outcomeOf reads what happened to op: its audit record, or a sidecar
// still pending.
func outcomeOf(ctx context.Context, st objstore.Store, keys format.Keys, op format.ID) (opOutcome, error) {
	oc := opOutcome{Op: op.String(), Decision: "left"}
	obj, err := st.Get(ctx, keys.Audit(op))
	if isNotFound(err) {
		return oc, nil
	}
	if err != nil {
		return oc, fmt.Errorf("read audit %s: %w", keys.Audit(op), err)
	}
	au, _, err := format.DecodeAudit(obj.Data)
	if err != nil {
		return oc, fmt.Errorf("decode audit %s: %w", keys.Audit(op), err)
	}
	oc.Branch = fmt.Sprintf("%s#%d", au.Branch.Name, au.Branch.Incarnation)
	oc.WriterKind, oc.Actor, oc.Decision, oc.Converged = au.WriterKind, au.Actor, string(au.Decision), au.Converged
	if au.RecoveryCommit != (format.ID{}) {
		oc.RecoveryCommit = au.RecoveryCommit.String()
	}
	for _, t := range au.Tables {
		oc.Tables = append(oc.Tables, auditTableJSON{Table: t.Table, FromPinned: t.FromPinned, FromHead: t.FromHead, To: t.To})
	}
	return oc, nil
}

func (a *app) printRecover(r recoverJSON) {
	w := a.stdout
	fmt.Fprintf(w, "pending sidecars before: %d (ignore lease: %t, lease %s)\n", r.Pending, r.IgnoreLease, kernel.RecoveryLease)
	for _, oc := range r.Ops {
		if oc.Decision == "left" {
			fmt.Fprintf(w, "  op %s: left pending (younger than the lease, deferred or unreadable)\n", oc.Op)
			continue
		}
		conv := ""
		if oc.Converged {
			conv = " (converged: already published)"
		}
		fmt.Fprintf(w, "  op %s: %s%s on %s, writer %s/%s, commit %s\n", oc.Op, oc.Decision, conv, oc.Branch, oc.WriterKind, oc.Actor, orDash(oc.RecoveryCommit))
		for _, t := range oc.Tables {
			fmt.Fprintf(w, "    %s: pinned %d, head %d -> pinned %d\n", t.Table, t.FromPinned, t.FromHead, t.To)
		}
	}
	fmt.Fprintf(w, "this sweep: resolved %d, deferred %d, young %d, unreadable %d\n", r.Resolved, r.Deferred, r.Young, r.Unreadable)
	if r.Error != "" {
		fmt.Fprintf(w, "unresolved: %s\n", r.Error)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

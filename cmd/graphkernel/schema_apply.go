package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// schemaApplyName is the command name `graphkernel schema apply ...`
// dispatches to (run rewrites "schema apply" to it).
const schemaApplyName = "schema apply"

// schemaApplyCommand is `schema apply`, over data.Graph.ApplySchema.
func schemaApplyCommand() command {
	return command{name: schemaApplyName, args: "STORE ROOT BRANCH FILE", nargs: exactly(4),
		summary: "change BRANCH's schema to the one in FILE as one commit (prints the planned change and what it checked)",
		notes: "Adds and drops types and properties, loosens required properties, widens int32 to int64 and\n" +
			"changes @card bounds; a property rename keeps its data (--rename TYPE.OLD=NEW, repeatable), and\n" +
			"so does a type rename (--rename OLD=NEW: the type keeps its storage table, @table); a\n" +
			"property added with @default(...) reads it on older rows. Refused: a kind change other than\n" +
			"int32 -> int64, nullable to required, a changed default, a dropped type with rows (unless\n" +
			"--drop-rows, which deletes them in the same commit), a required property without a default\n" +
			"on a type with rows, a @card tightening live edges break (named). Old fragments are read\n" +
			"through the new schema.",
		example: "graphkernel schema apply fs:/var/lib/graphs g1 main people.schema --rename Person.age=years --dry-run",
		flags: func(fs *flag.FlagSet, o *opts) {
			fs.BoolVar(&o.dryRun, "dry-run", false, "plan and check only: publish nothing")
			fs.BoolVar(&o.dropRows, "drop-rows", false, "a dropped type may hold rows: delete them in the same commit")
			fs.Func("rename", "rename a property (`TYPE.OLD=NEW`) or a type (OLD=NEW) keeping its data (repeatable)", func(v string) error {
				o.renames = append(o.renames, v)
				return nil
			})
			fs.StringVar(&o.actor, "actor", "graphkernel-schema", "commit `actor`")
			fs.StringVar(&o.message, "message", "", "commit `message` (default: schema change)")
		},
		run: runSchemaApply}
}

// schemaApplyJSON is `schema apply --json`.
type schemaApplyJSON struct {
	Branch  string   `json:"branch"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Steps   []string `json:"steps"`
	Checked []string `json:"checked"`
	DryRun  bool     `json:"dry_run"`
	Commit  string   `json:"commit,omitempty"`
}

func runSchemaApply(ctx context.Context, a *app, o *opts, pos []string) error {
	renames, types, err := parseRenames(o.renames)
	if err != nil {
		return err
	}
	text, err := os.ReadFile(pos[3])
	if err != nil {
		return fmt.Errorf("schema apply: %w", err)
	}
	target, err := schema.Parse(text)
	if err != nil {
		return fmt.Errorf("schema apply: %s: %w", pos[3], err)
	}
	g, _, err := a.openGraph(ctx, pos[0], pos[1], !o.dryRun)
	if err != nil {
		return err
	}
	b, err := g.Branch(ctx, pos[2])
	if err != nil {
		return fmt.Errorf("schema apply: %w", err)
	}
	msg := o.message
	if msg == "" {
		msg = "schema change"
	}
	ch, err := g.ApplySchema(ctx, b, target, kernel.LineageIntent{Actor: o.actor, Message: msg}, data.SchemaOptions{Renames: renames, TypeRenames: types, DryRun: o.dryRun, DropRows: o.dropRows})
	if err != nil {
		return err
	}
	out := schemaApplyJSON{Branch: pos[2], From: ch.From, To: ch.To, Steps: []string{}, Checked: append([]string{}, ch.Checked...), DryRun: o.dryRun}
	for _, s := range ch.Plan.Steps {
		out.Steps = append(out.Steps, s.String())
	}
	if ch.Commit.ID != (kernel.CommitID{}) {
		out.Commit = ch.Commit.ID.String()
	}
	if o.json {
		return a.emitJSON(out)
	}
	return printSchemaApply(a, out)
}

func printSchemaApply(a *app, out schemaApplyJSON) error {
	if len(out.Steps) == 0 {
		_, err := fmt.Fprintf(a.stdout, "%s: schema unchanged (%s); nothing to do\n", out.Branch, out.From[:12])
		return err
	}
	writeSteps(a.stdout, out.Steps)
	for _, c := range out.Checked {
		fmt.Fprintf(a.stdout, "  checked %s\n", c)
	}
	if out.DryRun {
		_, err := fmt.Fprintf(a.stdout, "dry run: schema %s -> %s not published\n", out.From[:12], out.To[:12])
		return err
	}
	_, err := fmt.Fprintf(a.stdout, "published %s on %s: schema %s -> %s\n", out.Commit, out.Branch, out.From[:12], out.To[:12])
	return err
}

// parseRenames turns --rename TYPE.OLD=NEW values into property renames
// and --rename OLD=NEW values into type renames.
func parseRenames(vals []string) ([]schema.Rename, []schema.TypeRename, error) {
	var props []schema.Rename
	var types []schema.TypeRename
	for _, v := range vals {
		lhs, to, ok := strings.Cut(v, "=")
		typ, from, isProp := strings.Cut(lhs, ".")
		switch {
		case !ok || typ == "" || to == "" || strings.Contains(to, ".") || (isProp && from == ""):
			return nil, nil, &usageError{fmt.Sprintf("--rename %q: want TYPE.OLD=NEW (a property) or OLD=NEW (a type)", v)}
		case isProp:
			props = append(props, schema.Rename{Type: typ, From: from, To: to})
		default:
			types = append(types, schema.TypeRename{From: typ, To: to})
		}
	}
	return props, types, nil
}

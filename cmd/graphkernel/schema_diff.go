package main

import (
	"context"
	"fmt"
	"io"

	"github.com/graphkernel/graphkernel/kernel/changefeed"
	"github.com/graphkernel/graphkernel/kernel/data"
)

// schemaDiffName is the command name `graphkernel schema diff ...`
// dispatches to (run rewrites "schema diff" to it).
const schemaDiffName = "schema diff"

// schemaDiffCommand is `schema diff`, over schema.Compare (the steps the
// change feed reports for a schema change).
func schemaDiffCommand() command {
	return command{name: schemaDiffName, args: "STORE ROOT FROM TO", nargs: exactly(4),
		summary: "the schema change from snapshot FROM to snapshot TO (refs: commit id, BRANCH or BRANCH@VERSION; any branches): " +
			"added and dropped types and properties, renamed and loosened properties, re-bounded @card",
		notes: "A property's identity is its storage column, as in merges: a column kept under a new name is a rename,\n" +
			"a dropped and re-added name is a drop and an add. Reads two manifests and their schemas; writes nothing.",
		example: "graphkernel schema diff fs:/var/lib/graphs g1 main@3 feature --json",
		run:     runSchemaDiff}
}

// schemaSideJSON is one side of `schema diff --json`.
type schemaSideJSON struct {
	snapJSON
	Schema string `json:"schema"`
}

// schemaDiffJSON is `schema diff --json`.
type schemaDiffJSON struct {
	From    schemaSideJSON `json:"from"`
	To      schemaSideJSON `json:"to"`
	Changed bool           `json:"changed"`
	Steps   []string       `json:"steps"`
}

func runSchemaDiff(ctx context.Context, a *app, o *opts, pos []string) error {
	from, to, err := resolvePair(ctx, a, pos)
	if err != nil {
		return err
	}
	out := schemaDiffJSON{From: schemaSide(pos[2], from), To: schemaSide(pos[3], to), Steps: []string{}}
	if sc := changefeed.SchemaChangeOf(from, to); sc != nil {
		out.Changed, out.Steps = true, schemaStepTexts(sc)
	}
	if o.json {
		return a.emitJSON(out)
	}
	fmt.Fprintf(a.stdout, "schema diff %s %s\nfrom %s (%s, %s v%d)\nto   %s (%s, %s v%d)\n", out.From.Ref, out.To.Ref,
		out.From.Schema[:12], out.From.Commit, out.From.Branch, out.From.ManifestVersion,
		out.To.Schema[:12], out.To.Commit, out.To.Branch, out.To.ManifestVersion)
	if !out.Changed {
		_, err := fmt.Fprintln(a.stdout, "\nschema unchanged")
		return err
	}
	fmt.Fprintln(a.stdout)
	writeSteps(a.stdout, out.Steps)
	_, err = fmt.Fprintf(a.stdout, "\n%d step(s)\n", len(out.Steps))
	return err
}

func schemaSide(ref string, s *data.Snapshot) schemaSideJSON {
	return schemaSideJSON{snapJSON: toSnapJSON(ref, s), Schema: s.Kernel().SchemaHash()}
}

func schemaStepTexts(sc *changefeed.SchemaChange) []string {
	out := []string{}
	for _, st := range sc.Steps {
		out = append(out, st.String())
	}
	return out
}

// writeSteps prints schema change steps, one an indented line (schema
// apply's plan, schema diff, and the schema change diff and changes show).
func writeSteps(w io.Writer, steps []string) {
	for _, s := range steps {
		fmt.Fprintf(w, "  %s\n", s)
	}
}

// schemaChangeJSON is the schema change diff and changes print before the
// row changes (--json: the "schema" field).
type schemaChangeJSON struct {
	From  string   `json:"from"`
	To    string   `json:"to"`
	Steps []string `json:"steps"`
}

// writeSchemaChange prints a schema change ahead of row changes: in the
// JSON header, or as text lines.
func writeSchemaChange(out *changeWriter, sc *changefeed.SchemaChange) {
	if sc == nil || out.json {
		return
	}
	out.textf("schema %s -> %s (the changes below use the new schema)\n", sc.From[:12], sc.To[:12])
	writeSteps(out.w, schemaStepTexts(sc))
	out.textf("\n")
}

// schemaHeader returns the "schema" header pair of a JSON change document
// (none when the schema did not change).
func schemaHeader(sc *changefeed.SchemaChange) []any {
	if sc == nil {
		return nil
	}
	return []any{"schema", schemaChangeJSON{From: sc.From, To: sc.To, Steps: schemaStepTexts(sc)}}
}

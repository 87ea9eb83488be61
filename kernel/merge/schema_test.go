package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

func parse(t *testing.T, text string) schema.Schema {
	t.Helper()
	s, err := schema.Parse([]byte(text))
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	return s
}

const baseText = `node Person { name: string age: int64? } node Company { name: string }
edge WorksAt: Person -> Company { since: int64? }`

// TestMergeSchemas pins the rules of the three-way schema merge (S10):
// per case the merged schema (as text) or the conflict rules.
func TestMergeSchemas(t *testing.T) {
	cases := []struct {
		name           string
		base           string // "" is baseText
		source, target string
		srcRows        map[string]uint64
		tgtRows        map[string]uint64
		want           string       // merged schema text
		rules          []SchemaRule // else: the conflicts' rules
	}{
		{name: "unchanged", source: baseText, target: baseText, want: baseText},
		{name: "source only", target: baseText,
			source: `node Person { name: string age: int64? email: string? } node Company { name: string }
edge WorksAt: Person -> Company { since: int64? }`,
			want: `node Person { name: string age: int64? email: string? } node Company { name: string }
edge WorksAt: Person -> Company { since: int64? }`},
		{name: "different properties added on both sides",
			source: `node Person { name: string age: int64? email: string? } node Company { name: string }
edge WorksAt: Person -> Company { since: int64? }`,
			target: `node Person { name: string age: int64? phone: string? } node Company { name: string }
edge WorksAt: Person -> Company { since: int64? }`,
			want: `node Person { name: string age: int64? phone: string? email: string? } node Company { name: string }
edge WorksAt: Person -> Company { since: int64? }`},
		{name: "same property added on both sides converges",
			source: `node Person { name: string age: int64? email: string? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? } node Tag { label: string? }`,
			target: `node Person { name: string age: int64? email: string? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? } node Tag { label: string? }`,
			want:   `node Person { name: string age: int64? email: string? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? } node Tag { label: string? }`},
		{name: "property added on both sides with different kinds",
			source: `node Person { name: string age: int64? email: string? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			target: `node Person { name: string age: int64? email: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			rules:  []SchemaRule{ColumnClash}},
		{name: "type renamed on one side takes the new name and keeps the table",
			source: `node Human @table(Person) { name: string age: int64? } node Company { name: string }
edge WorksAt: Human -> Company { since: int64? }`,
			target: `node Person { name: string age: int64? email: string? } node Company { name: string }
edge WorksAt: Person -> Company @card(0..1) { since: int64? }`,
			srcRows: map[string]uint64{"Person": 2}, tgtRows: map[string]uint64{"Person": 3},
			want: `node Human @table(Person) { name: string age: int64? email: string? } node Company { name: string }
edge WorksAt: Human -> Company @card(0..1) { since: int64? }`},
		{name: "type renamed alike on both sides converges",
			source: `node Human @table(Person) { name: string age: int64? } node Company { name: string } edge WorksAt: Human -> Company { since: int64? }`,
			target: `node Human @table(Person) { name: string age: int64? } node Company { name: string } edge WorksAt: Human -> Company { since: int64? }`,
			want:   `node Human @table(Person) { name: string age: int64? } node Company { name: string } edge WorksAt: Human -> Company { since: int64? }`},
		{name: "type renamed differently on both sides",
			source: `node Human @table(Person) { name: string age: int64? } node Company { name: string } edge WorksAt: Human -> Company { since: int64? }`,
			target: `node People @table(Person) { name: string age: int64? } node Company { name: string } edge WorksAt: People -> Company { since: int64? }`,
			rules:  []SchemaRule{DivergentTypeName}},
		{name: "edge type renamed on one side, re-bounded on the other",
			source: `node Person { name: string age: int64? } node Company { name: string } edge Employs: Person -> Company @table(WorksAt) { since: int64? }`,
			target: `node Person { name: string age: int64? } node Company { name: string } edge WorksAt: Person -> Company @card(0..1) { since: int64? }`,
			want:   `node Person { name: string age: int64? } node Company { name: string } edge Employs: Person -> Company @card(0..1) @table(WorksAt) { since: int64? }`},
		{name: "type renamed on one side, dropped on the other",
			source: `node Person { name: string age: int64? } node Firm @table(Company) { name: string } edge WorksAt: Person -> Firm { since: int64? }`,
			target: `node Person { name: string age: int64? }`,
			rules:  []SchemaRule{DropVsChange}},
		{name: "type renamed on one side to a name the other side added",
			source: `node Human @table(Person) { name: string age: int64? } node Company { name: string } edge WorksAt: Human -> Company { since: int64? }`,
			target: baseText + ` node Human { x: string? }`,
			rules:  []SchemaRule{DivergentTypeName}},
		{name: "a type added on one side under a renamed type's old name (fresh table)",
			base:   `node Human @table(Person) { name: string }`,
			source: `node Human @table(Person) { name: string } node Person @table(Person_2) { nick: string? }`,
			target: `node Human @table(Person) { name: string age: int64? }`,
			want:   `node Human @table(Person) { name: string age: int64? } node Person @table(Person_2) { nick: string? }`},
		{name: "int32 widened on one side takes the widening", base: `node P { n: int32? m: int32? }`,
			source: `node P { n: int64? m: int32? }`, target: `node P { n: int32? m: int64? }`,
			want: `node P { n: int64? m: int64? }`},
		{name: "required with a default added on the source, target rows", base: `node P { n: int32? }`,
			source: `node P { n: int32? k: int64 @default(1) }`, target: `node P { n: int32? }`, tgtRows: map[string]uint64{"P": 3},
			want: `node P { n: int32? k: int64 @default(1) }`},
		{name: "int32 widened on both sides converges", base: `node P { n: int32? }`,
			source: `node P { n: int64? }`, target: `node P { n: int64? }`, want: `node P { n: int64? }`},
		{name: "type added on both sides differently",
			source: baseText + ` node Tag { label: string? }`, target: baseText + ` node Tag { label: int64? }`,
			rules: []SchemaRule{DivergentType}},
		{name: "rename on one side, loosen on the other",
			source: `node Person { fullname: string @col(name) age: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			target: `node Person { name: string? age: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			want:   `node Person { fullname: string? @col(name) age: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`},
		{name: "renamed on both sides to two names",
			source: `node Person { fullname: string @col(name) age: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			target: `node Person { given: string @col(name) age: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			rules:  []SchemaRule{DivergentProperty}},
		{name: "drop on one side, unchanged on the other",
			source: `node Person @retired(age) { name: string } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			target: `node Person { name: string age: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? } node Tag { label: string? }`,
			want:   `node Person @retired(age) { name: string } node Company { name: string } edge WorksAt: Person -> Company { since: int64? } node Tag { label: string? }`},
		{name: "property dropped on one side, renamed on the other",
			source: `node Person @retired(age) { name: string } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			target: `node Person { name: string years: int64? @col(age) } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			rules:  []SchemaRule{DropVsChange}},
		{name: "drop and re-add is not a kept property",
			source: `node Person @retired(age) { name: string age: int64? @col(age_2) } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			target: `node Person { name: string age: int64? email: string? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			want:   `node Person @retired(age) { name: string email: string? age: int64? @col(age_2) } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`},
		{name: "rename on one side, add of that name on the other",
			source: `node Person { name: string years: int64? @col(age) } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			target: `node Person { name: string age: int64? years: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			rules:  []SchemaRule{DivergentProperty}},
		{name: "type dropped on one side, written on the other", base: baseText + ` node Tag { label: string? }`,
			source:  `node Person { name: string age: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? } node Tag { label: string? }`,
			target:  `node Person { name: string age: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			srcRows: map[string]uint64{"Tag": 3},
			rules:   []SchemaRule{DropVsRows}},
		{name: "empty type dropped on one side", base: baseText + ` node Tag { label: string? }`,
			source: baseText + ` node Tag { label: string? }`, target: baseText, want: baseText},
		{name: "type dropped on one side, changed on the other", base: baseText + ` node Tag { label: string? }`,
			source: baseText + ` node Tag { label: string? note: string? }`, target: baseText,
			rules: []SchemaRule{DropVsChange}},
		{name: "required property added on one side, rows on the other", base: baseText + ` node Tag { label: string? }`,
			source: `node Person { name: string age: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? } node Tag { label: string? code: string }`,
			target: baseText + ` node Tag { label: string? }`, tgtRows: map[string]uint64{"Tag": 1},
			rules: []SchemaRule{RequiredVsRows}},
		{name: "card changed on one side",
			source: baseText, target: `node Person { name: string age: int64? } node Company { name: string } edge WorksAt: Person -> Company @card(0..1) { since: int64? }`,
			want: `node Person { name: string age: int64? } node Company { name: string } edge WorksAt: Person -> Company @card(0..1) { since: int64? }`},
		{name: "card changed on both sides differently",
			source: `node Person { name: string age: int64? } node Company { name: string } edge WorksAt: Person -> Company @card(0..2) { since: int64? }`,
			target: `node Person { name: string age: int64? } node Company { name: string } edge WorksAt: Person -> Company @card(0..1) { since: int64? }`,
			rules:  []SchemaRule{DivergentCard}},
		{name: "source took a column the target retired",
			source: `node Person { name: string age: int64? nick: string? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			target: `node Person @retired(nick) { name: string age: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`,
			rules:  []SchemaRule{ColumnClash}},
		{name: "merged schema invalid",
			source: `node Person { name: string age: int64? }`,
			target: baseText + ` edge Employs: Person -> Company`,
			rules:  []SchemaRule{InvalidSchema}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base
			if base == "" {
				base = baseText
			}
			got := MergeSchemas(SchemaInput{Base: parse(t, base), Source: parse(t, tc.source), Target: parse(t, tc.target),
				SourceRows: tc.srcRows, TargetRows: tc.tgtRows})
			if tc.rules != nil {
				var rules []SchemaRule
				for _, c := range got.Conflicts {
					if c.Kind != SchemaConflict {
						t.Fatalf("conflict %v is not a SchemaConflict", c)
					}
					rules = append(rules, c.Rule)
				}
				if !cmp.Equal(rules, tc.rules) {
					t.Fatalf("rules %v, want %v (%v)", rules, tc.rules, got.Conflicts)
				}
				return
			}
			if len(got.Conflicts) > 0 {
				t.Fatalf("conflicts %v, want %s", got.Conflicts, tc.want)
			}
			if want := parse(t, tc.want).Normalized(); !cmp.Equal(got.Schema.Normalized(), want) {
				t.Fatalf("merged\n%s\nwant\n%s", got.Schema, want)
			}
		})
	}
}

// TestMergeSchemasIsSymmetricInConflicts: swapping the sides reports the
// same conflict rules, and a conflict-free merge the same properties.
func TestMergeSchemasIsSymmetricInConflicts(t *testing.T) {
	a := `node Person { fullname: string @col(name) age: int64? } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`
	b := `node Person @retired(age) { name: string } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`
	x := MergeSchemas(SchemaInput{Base: parse(t, baseText), Source: parse(t, a), Target: parse(t, b)})
	y := MergeSchemas(SchemaInput{Base: parse(t, baseText), Source: parse(t, b), Target: parse(t, a)})
	if len(x.Conflicts) > 0 || len(y.Conflicts) > 0 {
		t.Fatalf("conflicts %v / %v", x.Conflicts, y.Conflicts)
	}
	want := parse(t, `node Person @retired(age) { fullname: string @col(name) } node Company { name: string } edge WorksAt: Person -> Company { since: int64? }`).Normalized()
	for _, got := range []SchemaMerge{x, y} {
		if !cmp.Equal(got.Schema.Normalized(), want) {
			t.Fatalf("merged\n%s\nwant\n%s", got.Schema, want)
		}
	}
}

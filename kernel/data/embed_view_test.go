package data_test

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// TestWithoutEmbeds: the marking view of a table version drops exactly
// its data.embed.* metadata, keeps every other entry in order, counts the
// bytes it left out and never modifies its input.
func TestWithoutEmbeds(t *testing.T) {
	e := func(n string) format.KV { return format.KV{Key: "data.embed." + n, Value: "QUJD"} }
	o := func(k string) format.KV { return format.KV{Key: k, Value: "v"} }
	for _, tc := range []struct {
		in, want []format.KV
		removed  int
	}{
		{nil, nil, 0},
		{[]format.KV{o("data.format")}, []format.KV{o("data.format")}, 0},
		{[]format.KV{e("A")}, []format.KV{}, len("data.embed.A") + 4},
		{[]format.KV{o("a"), e("A"), o("b"), e("B"), o("c")}, []format.KV{o("a"), o("b"), o("c")}, 2 * (len("data.embed.A") + 4)},
		{[]format.KV{e("A"), o("z")}, []format.KV{o("z")}, len("data.embed.A") + 4},
	} {
		in := format.TableVersion{Table: "T", Version: 2, Rows: 3, Fragments: []string{"f"}, Metadata: tc.in}
		before := fmt.Sprint(in)
		got, removed := data.WithoutEmbeds(in)
		if fmt.Sprint(got.Metadata) != fmt.Sprint(tc.want) || removed != tc.removed {
			t.Errorf("WithoutEmbeds(%v) = %v, %d; want %v, %d", tc.in, got.Metadata, removed, tc.want, tc.removed)
		}
		if got.Table != "T" || got.Version != 2 || got.Rows != 3 || len(got.Fragments) != 1 {
			t.Errorf("WithoutEmbeds changed a field other than the metadata: %+v", got)
		}
		if fmt.Sprint(in) != before {
			t.Errorf("WithoutEmbeds modified its input: %v, was %v", in, before)
		}
	}
}

package fuzz

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/feed"
)

// FuzzDecodeFeedToken: any string decodes or fails with ErrBadCursor (a
// *CursorError), never a panic; what decodes re-encodes to the same string.
func FuzzDecodeFeedToken(f *testing.F) {
	seeds := []feed.Token{
		{Kind: feed.KindCursor, Binding: feed.Binding{Graph: feed.ID{1}, Branch: "main", Incarnation: feed.ID{2}}},
		{Kind: feed.KindPage, Binding: feed.Binding{Graph: feed.ID{1}, Branch: "dev", Incarnation: feed.ID{3}},
			Last: feed.Point{Commit: feed.ID{4}, Branch: "main", Incarnation: 1, Version: 7},
			At:   feed.Point{Commit: feed.ID{5}, Branch: "dev", Incarnation: 2, Version: 1}, Resume: feed.Resume{Type: "Person", After: "p1"}},
		{Kind: feed.KindCommitPage, Binding: feed.Binding{Graph: feed.ID{1}},
			At: feed.Point{Commit: feed.ID{5}, Branch: "dev", Incarnation: 2, Version: 1}, Resume: feed.Resume{Type: "Knows"}},
	}
	for _, s := range seeds {
		f.Add(s.Encode())
	}
	f.Add("")
	f.Add("Z2tmAQ")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := feed.Decode(s)
		if err != nil {
			var ce *feed.CursorError
			if !errors.Is(err, feed.ErrBadCursor) || !errors.As(err, &ce) {
				t.Fatalf("untyped: %v", err)
			}
			return
		}
		if tok.Encode() != s {
			t.Fatal("token does not round-trip")
		}
	})
}

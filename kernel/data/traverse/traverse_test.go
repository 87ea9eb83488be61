package traverse

import (
	"errors"
	"fmt"
	"testing"
)

// chain: n0 -> n1 -> ... ; star: hub -> s0..s9.
func graph(node string) ([]string, error) {
	switch {
	case node == "hub":
		var out []string
		for i := 9; i >= 0; i-- {
			out = append(out, fmt.Sprintf("s%d", i))
		}
		return out, nil
	case len(node) == 2 && node[0] == 'n' && node[1] < '9':
		return []string{"n" + string(node[1]+1), "n" + string(node[1]+1)}, nil
	}
	return nil, nil
}

// TestBFSLimits pins the order, the hop window and each limit's outcome.
func TestBFSLimits(t *testing.T) {
	for _, c := range []struct {
		name     string
		start    []string
		min, max int
		lim      Limits
		want     string
		trunc    bool
		err      error
	}{
		{"window", []string{"n0", "n0"}, 1, 3, Limits{}, "[{n1 1} {n2 2} {n3 3}]", false, nil},
		{"start only", []string{"n5"}, 0, 0, Limits{}, "[{n5 0}]", false, nil},
		{"sorted level", []string{"hub"}, 1, 1, Limits{}, "[{s0 1} {s1 1} {s2 1} {s3 1} {s4 1} {s5 1} {s6 1} {s7 1} {s8 1} {s9 1}]", false, nil},
		{"result cut", []string{"hub"}, 0, 1, Limits{MaxResult: 3}, "[{hub 0} {s0 1} {s1 1}]", true, nil},
		{"frontier", []string{"hub"}, 0, 2, Limits{MaxFrontier: 5}, "[]", false, ErrLimit},
		{"bad hops", []string{"hub"}, 2, 1, Limits{}, "[]", false, ErrInvalid},
		{"too many hops", []string{"hub"}, 0, 9, Limits{MaxHops: 8}, "[]", false, ErrInvalid},
	} {
		res, err := BFS(c.start, c.min, c.max, c.lim, graph)
		if got := fmt.Sprint(res.Nodes); !errors.Is(err, c.err) || (c.err == nil && (got != c.want || res.Truncated != c.trunc)) {
			t.Errorf("%s: %v truncated=%v err=%v, want %s truncated=%v err=%v", c.name, got, res.Truncated, err, c.want, c.trunc, c.err)
		}
	}
}

package detlint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The deterministic packages: kernel code and everything the simulator's
// verdicts rest on. system_env.go is the one file where real time and
// entropy enter (SystemEnv), for callers outside the simulator.
var deterministic = []struct {
	dir   string
	allow []string
}{
	{"../../kernel", []string{"system_env.go"}},
	{"../../kernel/format", nil},
	{"../../kernel/lineage", nil},
	{"../../kernel/failpoint", nil},
	{"../../kernel/recovery", nil},
	{"../../kernel/branchindex", nil},
	{"../../kernel/migrate", nil},
	{"../../kernel/schema", nil},
	{"../../kernel/data", nil},
	{"../../kernel/kerneltest", nil},
	{"../../kernel/feed", nil},
	{"../../kernel/changefeed", nil},
	{"../../model", nil},
	{"../../objstore/sim", nil},
}

// TestDeterministicPackages pins house rule 1: no wall clock, no global
// rand, no environment, no goroutines, no unmarked map range in kernel and
// simulator code.
func TestDeterministicPackages(t *testing.T) {
	for _, tags := range TagSets {
		for _, p := range deterministic {
			t.Run(strings.Join(append([]string{strings.TrimPrefix(p.dir, "../../")}, tags...), "+"), func(t *testing.T) {
				findings, err := Check(p.dir, Options{AllowFiles: p.allow, Tags: tags})
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range findings {
					t.Errorf("%s", f)
				}
			})
		}
	}
}

// The checker itself must catch each banned construct.
func TestCheckerCatchesViolations(t *testing.T) {
	src := `package bad

import (
	crand "crypto/rand"
	"math/rand"
	"os"
	"time"
)

var _ = crand.Reader

func f(m map[string]int) {
	_ = time.Now()
	time.Sleep(1)
	_ = rand.Intn(3)
	_ = rand.New(rand.NewSource(1))
	_ = os.Getenv("X")
	go func() {}()
	for k := range m {
		_ = k
	}
	//detlint:ordered keys are sorted below
	for k := range m {
		_ = k
	}
}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	findings, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"imports crypto/rand", "time.Now", "time.Sleep", "rand.Intn", "os.Getenv", "go statement", "range over a map"}
	var got []string
	for _, f := range findings {
		got = append(got, f.What)
	}
	joined := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("checker missed %q; found:\n%s", w, joined)
		}
	}
	if n := strings.Count(joined, "range over a map"); n != 1 {
		t.Errorf("found %d unmarked map ranges, want 1 (the marked one is allowed)", n)
	}
	if strings.Contains(joined, "rand.New") {
		t.Errorf("seeded rand.New flagged: %s", joined)
	}
}

// TestCheckLintsEveryTagSet: a file behind a build constraint is linted
// under the tag set that builds it, and a file that set excludes is not
// (two files declaring the same name under opposite tags must not clash).
func TestCheckLintsEveryTagSet(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"on.go":  "//go:build simplant\n\npackage p\n\nimport \"time\"\n\nfunc f() { _ = time.Now() }\n",
		"off.go": "//go:build !simplant\n\npackage p\n\nimport \"os\"\n\nfunc f() { _ = os.Getenv(\"X\") }\n",
	}
	for name, src := range files { //detlint:ordered each file is written independently
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		tags       []string
		want, miss string
	}{
		{nil, "os.Getenv", "time.Now"},
		{[]string{"simplant"}, "time.Now", "os.Getenv"},
	} {
		findings, err := Check(dir, Options{Tags: tc.tags})
		if err != nil {
			t.Fatalf("tags %v: %v", tc.tags, err)
		}
		var got []string
		for _, f := range findings {
			got = append(got, f.What)
		}
		joined := strings.Join(got, "\n")
		if !strings.Contains(joined, tc.want) || strings.Contains(joined, tc.miss) {
			t.Errorf("tags %v: findings %q, want %q and not %q", tc.tags, joined, tc.want, tc.miss)
		}
	}
}

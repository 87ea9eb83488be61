// Package detlint checks Go source for the nondeterminism sources that house
// rule 1 bans from kernel and simulator code: wall-clock reads and timers,
// the global math/rand source, crypto/rand, environment reads, goroutines,
// and ranging over a map (whose order is random) unless the loop is marked
// as order-insensitive.
//
// It is a test helper: packages call Check from a test so that a violation
// turns the build red. Map ranges are found with go/types; a loop whose
// order cannot matter (it only collects keys that are sorted next, or only
// copies into another map) is allowed by a comment on its line or the line
// above:
//
//	//detlint:ordered <why the order cannot leak>
package detlint

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Marker is the comment that allows one map range.
const Marker = "//detlint:ordered"

// GoMarker is the comment that allows one go statement: a deliberate,
// documented exception (docs/invariants.md lists each), followed by its
// reason on the same line.
const GoMarker = "//detlint:goroutine"

var forbiddenTime = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true,
}

var forbiddenOS = map[string]bool{
	"Getenv": true, "LookupEnv": true, "Environ": true, "Hostname": true, "Getpid": true,
}

// seededRand are the math/rand(/v2) names that build an explicitly seeded
// source rather than touching the global one.
var seededRand = map[string]bool{
	"New": true, "NewPCG": true, "NewChaCha8": true, "Rand": true, "PCG": true,
	"ChaCha8": true, "Source": true, "NewSource": true, "NewZipf": true, "Zipf": true,
}

// Finding is one violation.
type Finding struct {
	Pos  token.Position
	What string
}

// String renders the finding as "file:line:col: what".
func (f Finding) String() string { return fmt.Sprintf("%s: %s", f.Pos, f.What) }

// Options tunes a check.
type Options struct {
	// AllowFiles names base file names exempt from every rule (the one
	// place real time and entropy are allowed to enter, for example).
	AllowFiles []string
	// Tags are the build tags of the build whose files are linted: a file
	// is linted exactly when `go build -tags Tags` would compile it.
	Tags []string
}

// TagSets are the build-tag combinations the repository builds with: the
// plain build and the planted-bug build. Every deterministic package is
// linted under each (TestDeterministicPackages and its siblings).
var TagSets = [][]string{nil, {"simplant"}}

// Check parses and type-checks the non-test Go files of the package in dir
// and returns every violation, sorted by position.
//
// The packages dir imports are type-checked from source once per process
// and shared by every later Check (see sharedImporter): a test that checks
// many packages pays for the standard library and the module's common
// dependencies once, not once per package.
func Check(dir string, opts Options) ([]Finding, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	fset, imp := shared.get()
	files, err := parseDir(fset, dir, opts)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("detlint: no Go files in %s", dir)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	conf := types.Config{Importer: imp, Error: func(error) {}}
	if _, err := conf.Check(dir, fset, files, info); err != nil {
		return nil, fmt.Errorf("detlint: type-check %s: %w", dir, err)
	}
	var out []Finding
	for _, f := range files {
		out = append(out, checkFile(fset, f, info)...)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Line < b.Line
	})
	return out, nil
}

// shared is the one source importer of the process and the file set its
// packages are positioned in. The source importer resolves imports with
// build.Default whatever Options.Tags says (only the checked package's own
// files follow the tags), so one importer serves every tag set; it caches
// each imported package, and it is not safe for concurrent use, hence mu.
var shared sharedImporter

type sharedImporter struct {
	mu   sync.Mutex
	fset *token.FileSet
	imp  types.Importer
}

// get returns the shared file set and importer, made on first use. The
// caller holds mu.
func (s *sharedImporter) get() (*token.FileSet, types.Importer) {
	if s.imp == nil {
		s.fset = token.NewFileSet()
		s.imp = importer.ForCompiler(s.fset, "source", nil)
	}
	return s.fset, s.imp
}

func parseDir(fset *token.FileSet, dir string, opts Options) ([]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	skip := map[string]bool{}
	for _, a := range opts.AllowFiles {
		skip[a] = true
	}
	bctx := build.Default
	bctx.BuildTags = opts.Tags
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || skip[name] {
			continue
		}
		match, err := bctx.MatchFile(dir, name)
		if err != nil {
			return nil, err
		}
		if !match {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

func checkFile(fset *token.FileSet, f *ast.File, info *types.Info) []Finding {
	var out []Finding
	report := func(p token.Pos, what string) { out = append(out, Finding{Pos: fset.Position(p), What: what}) }
	imports := importNames(f)
	if imports["crypto/rand"] != "" {
		report(f.Package, "imports crypto/rand")
	}
	allowed := markedLines(fset, f, Marker)
	allowedGo := markedLines(fset, f, GoMarker)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			if !allowedGo[fset.Position(n.Pos()).Line] {
				report(n.Pos(), "go statement without "+GoMarker)
			}
		case *ast.SelectorExpr:
			checkSelector(n, imports, report)
		case *ast.RangeStmt:
			if isMap(info, n.X) && !allowed[fset.Position(n.Pos()).Line] {
				report(n.Pos(), "range over a map without "+Marker)
			}
		}
		return true
	})
	return out
}

func checkSelector(n *ast.SelectorExpr, imports map[string]string, report func(token.Pos, string)) {
	id, ok := n.X.(*ast.Ident)
	if !ok {
		return
	}
	switch id.Name {
	case imports["time"]:
		if forbiddenTime[n.Sel.Name] {
			report(n.Pos(), "time."+n.Sel.Name)
		}
	case imports["math/rand"], imports["math/rand/v2"]:
		if !seededRand[n.Sel.Name] {
			report(n.Pos(), "rand."+n.Sel.Name+" (the global source)")
		}
	case imports["os"]:
		if forbiddenOS[n.Sel.Name] {
			report(n.Pos(), "os."+n.Sel.Name)
		}
	}
}

// importNames maps an import path to the local name it is used under
// ("" when not imported).
func importNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if path == "math/rand/v2" {
			name = "rand"
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[path] = name
	}
	return out
}

// markedLines returns the lines a marker comment allows a construct on:
// the line of the comment and the line after it. A marker with no reason
// after it allows nothing.
func markedLines(fset *token.FileSet, f *ast.File, marker string) map[int]bool {
	out := map[int]bool{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, marker+" ") && strings.TrimSpace(c.Text[len(marker):]) != "" {
				line := fset.Position(c.Pos()).Line
				out[line] = true
				out[line+1] = true
			}
		}
	}
	return out
}

func isMap(info *types.Info, e ast.Expr) bool {
	tv, ok := info.Types[e]
	if !ok || tv.Type == nil {
		return false
	}
	_, ok = tv.Type.Underlying().(*types.Map)
	return ok
}

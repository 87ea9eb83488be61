package sim_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoNondeterminismSources: the package's non-test code imports no
// entropy or environment source, calls no wall-clock function or global
// random function and starts no goroutine. (Map iteration is reviewed by hand: the only range over a map
// copies it into another map, in Clone.)
func TestNoNondeterminismSources(t *testing.T) {
	forbiddenImports := map[string]bool{"math/rand": true, "crypto/rand": true, "os": true, "time/tzdata": true}
	forbiddenTime := map[string]bool{
		"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
		"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true,
	}
	seededRand := map[string]bool{"New": true, "NewPCG": true, "Rand": true, "PCG": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); forbiddenImports[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: go statement", fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				id, ok := n.X.(*ast.Ident)
				if ok && id.Name == "time" && forbiddenTime[n.Sel.Name] {
					t.Errorf("%s: time.%s", fset.Position(n.Pos()), n.Sel.Name)
				}
				if ok && id.Name == "rand" && !seededRand[n.Sel.Name] {
					t.Errorf("%s: rand.%s (the global source)", fset.Position(n.Pos()), n.Sel.Name)
				}
			}
			return true
		})
	}
	if checked < 5 {
		t.Fatalf("checked only %d files", checked)
	}
}

package detlint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestTestsCompareWithCmp fails on any call of reflect.DeepEqual in the
// module's test files: tests compare with go-cmp, whose diff says what
// differs (issue #30 item 9; the rule drifted once, so it is checked).
func TestTestsCompareWithCmp(t *testing.T) {
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "../.." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "tools") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		found = append(found, deepEqualCalls(fset, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range found {
		t.Errorf("%s: reflect.DeepEqual in a test; compare with cmp.Diff (github.com/google/go-cmp/cmp)", at)
	}
}

// deepEqualCalls lists the positions of reflect.DeepEqual selectors in f,
// under whatever name f imports reflect.
func deepEqualCalls(fset *token.FileSet, f *ast.File) []string {
	name := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"reflect"` {
			name = "reflect"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var at []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "DeepEqual" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
			at = append(at, fset.Position(sel.Pos()).String())
		}
		return true
	})
	return at
}

// TestDeepEqualCallsFindsUses checks the checker on a file that calls
// reflect.DeepEqual under an alias and one that only mentions it.
func TestDeepEqualCallsFindsUses(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{"package p\nimport r \"reflect\"\nvar _ = r.DeepEqual(1, 1)\n", 1},
		{"package p\n// reflect.DeepEqual is mentioned only\nvar _ = 1\n", 0},
		{"package p\nimport \"reflect\"\nvar _ = reflect.TypeOf(1)\n", 0},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x_test.go", tc.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(deepEqualCalls(fset, f)); got != tc.want {
			t.Errorf("%q: %d calls, want %d", tc.src, got, tc.want)
		}
	}
}

package readme

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite README.md's library snippet from Example_library")

const (
	readmePath  = "../../README.md"
	examplePath = "../../kernel/data/example_readme_test.go"
	exampleFunc = "Example_library"
	beginMarker = "<!-- example:begin -->"
	endMarker   = "<!-- example:end -->"
)

// TestReadmeSnippet checks that README.md's library snippet (a ```go block
// between the example markers) is exactly Example_library's import block
// and body, without its Output comment and one tab less indented. The
// example is compiled and run by kernel/data's tests, so the README's
// snippet compiles and does what its Output says.
func TestReadmeSnippet(t *testing.T) {
	want, err := exampleSnippet(examplePath, exampleFunc)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	if *updateReadme {
		out, err := replaceSnippet(readme, want)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(readmePath, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := readmeSnippet(readme)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("README.md's snippet differs from %s in %s (-example +readme); regenerate with\n"+
			"\tgo test ./internal/readme -run TestReadmeSnippet -update-readme\n%s", exampleFunc, examplePath, d)
	}
}

// TestSnippetExtraction pins the two extractions on small inputs, including
// the ways a README can be malformed.
func TestSnippetExtraction(t *testing.T) {
	src := "package p_test\n\nimport (\n\t\"fmt\"\n)\n\n// Doc.\nfunc Example_x() {\n\tx := 1\n\tif x > 0 {\n\t\tfmt.Println(x)\n\t}\n\n\t// Output:\n\t// 1\n}\n"
	path := filepath.Join(t.TempDir(), "x_test.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := exampleSnippet(path, "Example_x")
	if err != nil {
		t.Fatal(err)
	}
	want := "import (\n\t\"fmt\"\n)\n\nx := 1\nif x > 0 {\n\tfmt.Println(x)\n}\n"
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("example snippet (-want +got):\n%s", d)
	}
	if _, err := exampleSnippet(path, "Example_y"); err == nil {
		t.Fatal("a missing example was not reported")
	}

	doc := "# t\n\n" + beginMarker + "\n```go\n" + want + "```\n" + endMarker + "\n"
	if got, err := readmeSnippet([]byte(doc)); err != nil || got != want {
		t.Fatalf("readme snippet %q, %v; want %q", got, err, want)
	}
	for name, bad := range map[string]string{
		"no markers":     "# t\n",
		"no end":         beginMarker + "\n```go\nx\n```\n",
		"two begins":     doc + doc,
		"no fence":       beginMarker + "\nx\n" + endMarker + "\n",
		"unclosed fence": beginMarker + "\n```go\nx\n" + endMarker + "\n",
	} {
		if _, err := readmeSnippet([]byte(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	replaced, err := replaceSnippet([]byte(doc), "y := 2\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readmeSnippet(replaced); err != nil || got != "y := 2\n" {
		t.Fatalf("after replace: %q, %v", got, err)
	}
}

// exampleSnippet returns the file's import declaration, a blank line, and
// the body of function name up to its "// Output:" comment, dedented by
// one tab: what a reader copies into their own function.
func exampleSnippet(path, name string) (string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	var imports *ast.GenDecl
	var fn *ast.FuncDecl
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			if d.Tok == token.IMPORT && imports == nil {
				imports = d
			}
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == name {
				fn = d
			}
		}
	}
	if imports == nil || fn == nil || fn.Body == nil {
		return "", fmt.Errorf("%s: no import declaration or no func %s", path, name)
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	body := string(src[off(fn.Body.Lbrace)+1 : off(fn.Body.Rbrace)])
	if i := strings.Index(body, "\n\t// Output:"); i >= 0 {
		body = body[:i+1]
	}
	var b strings.Builder
	b.Write(src[off(imports.Pos()):off(imports.End())])
	b.WriteString("\n\n")
	for _, line := range strings.Split(strings.Trim(body, "\n"), "\n") {
		b.WriteString(strings.TrimPrefix(line, "\t") + "\n")
	}
	return b.String(), nil
}

var fence = regexp.MustCompile("(?s)^\\s*```go\n(.*?)```\\s*$")

// readmeSnippet returns the contents of the one ```go block between the
// example markers.
func readmeSnippet(readme []byte) (string, error) {
	_, inner, _, err := splitMarkers(readme)
	if err != nil {
		return "", err
	}
	m := fence.FindSubmatch(inner)
	if m == nil {
		return "", errors.New("README.md: the example markers do not enclose exactly one ```go block")
	}
	return string(m[1]), nil
}

// replaceSnippet returns readme with the block between the markers set to
// snippet.
func replaceSnippet(readme []byte, snippet string) ([]byte, error) {
	before, _, after, err := splitMarkers(readme)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(before)
	b.WriteString("\n```go\n" + snippet + "```\n")
	b.Write(after)
	return b.Bytes(), nil
}

// splitMarkers splits readme at its one pair of example markers: before
// ends with the begin marker, after starts with the end marker.
func splitMarkers(readme []byte) (before, inner, after []byte, err error) {
	if bytes.Count(readme, []byte(beginMarker)) != 1 || bytes.Count(readme, []byte(endMarker)) != 1 {
		return nil, nil, nil, fmt.Errorf("README.md: want exactly one %s and one %s", beginMarker, endMarker)
	}
	i := bytes.Index(readme, []byte(beginMarker)) + len(beginMarker)
	j := bytes.Index(readme, []byte(endMarker))
	if j < i {
		return nil, nil, nil, fmt.Errorf("README.md: %s comes before %s", endMarker, beginMarker)
	}
	return readme[:i], readme[i:j], readme[j:], nil
}

// TestReadmeQuickStart builds cmd/graphkernel once and runs the README's
// quick-start commands (every `go run ./cmd/graphkernel ...` or
// `graphkernel ...` line of its "Quick start" section) in order from the
// repository root, with each fs:/tmp/... store moved into a temporary
// directory. Each must exit 0.
func TestReadmeQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/graphkernel")
	}
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := quickStart(readme)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "graphkernel")
	build := exec.Command("go", "build", "-o", bin, "./cmd/graphkernel")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tmp := t.TempDir()
	for _, args := range cmds {
		for i, a := range args {
			args[i] = fsTmp.ReplaceAllString(a, "fs:"+filepath.ToSlash(tmp)+"/")
		}
		c := exec.Command(bin, args...)
		c.Dir = root
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("graphkernel %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("graphkernel %s\n%s", strings.Join(args, " "), out)
	}
}

var fsTmp = regexp.MustCompile(`^fs:/tmp/`)

// quickStart returns the arguments of each graphkernel command line in the
// README's "## Quick start" section; there must be at least three (load,
// log, verify).
func quickStart(readme []byte) ([][]string, error) {
	_, sec, ok := strings.Cut(string(readme), "\n## Quick start\n")
	if !ok {
		return nil, errors.New("README.md: no \"## Quick start\" section")
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	var cmds [][]string
	for _, line := range strings.Split(sec, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 3 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/graphkernel":
			cmds = append(cmds, f[3:])
		case len(f) > 1 && f[0] == "graphkernel":
			cmds = append(cmds, f[1:])
		}
	}
	if len(cmds) < 3 {
		return nil, fmt.Errorf("README.md: %d graphkernel commands in the quick start, want at least 3", len(cmds))
	}
	return cmds, nil
}

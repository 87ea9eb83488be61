package kernel_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The compile-time tripwire: raising format.OldestSupportedFormat without
// retiring the v3->v4 migration, or retiring it without raising the floor,
// fails the build of package kernel. The build itself is the check; this
// test documents it by building the package with each change overlaid
// (go build -overlay) and expecting the "overflows" compile error.
func TestTripwireFailsTheBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds package kernel twice")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	for _, tc := range []struct {
		name, file, from, to string
	}{
		{"floor raised, v3->v4 migration kept", "format/envelope.go",
			"const OldestSupportedFormat uint16 = 3", "const OldestSupportedFormat uint16 = 4"},
		{"v3->v4 migration retired, floor kept", "migration.go",
			"const migrationV3ToV4From = format.FormatV3", "const migrationV3ToV4From = format.CurrentFormat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Count(string(src), tc.from) != 1 {
				t.Fatalf("%s no longer declares %q: update this test with the tripwire", tc.file, tc.from)
			}
			dir := t.TempDir()
			changed := filepath.Join(dir, filepath.Base(tc.file))
			if err := os.WriteFile(changed, []byte(strings.Replace(string(src), tc.from, tc.to, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			abs, err := filepath.Abs(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: changed}})
			ov := filepath.Join(dir, "overlay.json")
			if err := os.WriteFile(ov, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(gobin, "build", "-overlay="+ov, ".")
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "overflows uint16") {
				t.Fatalf("build with %q: err=%v, want the tripwire's overflow error; output:\n%s", tc.to, err, out)
			}
		})
	}
}

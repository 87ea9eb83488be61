package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/objstore/s3/s3test"
)

// procsRun runs the process harness for a few seconds with three writers
// (this test binary re-executed, see TestMain) and checks the summary.
func procsRun(t *testing.T, store string) {
	code, out, errs := simrun(t, "-store", store, "-procs", "3", "-duration", "4s", "-json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	m := decode(t, out)
	for _, k := range []string{"violations"} {
		if m[k].(float64) != 0 {
			t.Fatalf("%s = %v\n%s", k, m[k], out)
		}
	}
	if v, _ := m["verify"].(string); !strings.HasPrefix(v, "clean") {
		t.Fatalf("verify %q\n%s", v, out)
	}
	for _, k := range []string{"procs", "kills", "restarts", "faults_injected", "commits", "lin_checks"} {
		if v, _ := m[k].(float64); v <= 0 {
			t.Errorf("%s = %v, want > 0\n%s", k, m[k], out)
		}
	}
	if m["trees_over"] != "live heads" || m["live_heads"] == nil { // the mix writers write no data plane: heads walked
		t.Errorf("trees over %v, live heads %v\n%s", m["trees_over"], m["live_heads"], out)
	}
	t.Logf("%s", out)
}

// builtTrees fails t unless the -procs run summed up by m built index
// trees and fragment ref chunks (format 10) that its final store's
// retained history still pins: under the harness's default
// -index-fanout (4) a run of seconds grows its tables past one chunk; at
// the kernel's shapes (-index-fanout 0) it would not, and the kills would
// never meet a tree.
func builtTrees(t *testing.T, m map[string]any, out string) {
	t.Helper()
	if m["index_fanout"] != float64(procsIndexFanout) || m["trees_over"] != "retained history" {
		t.Errorf("index fanout %v, trees over %v\n%s", m["index_fanout"], m["trees_over"], out)
	}
	for _, k := range []string{"index_ref_chunks", "fragment_ref_chunks", "tree_table_versions", "head_tree_versions"} {
		if v, _ := m[k].(float64); v <= 0 {
			t.Errorf("%s = %v, want > 0: the run built no trees\n%s", k, m[k], out)
		}
	}
}

// TestProcsFS pins -procs on a filesystem store: real writer processes
// SIGKILLed and restarted about once a second, the histories they recorded
// checked against the store with no violation.
func TestProcsFS(t *testing.T) {
	procsRun(t, "fs:"+t.TempDir())
}

// TestProcsS3 is TestProcsFS on a local versitygw (-store s3test, started as
// the S3 tests start theirs; GRAPHKERNEL_S3_OPTOUT=1 skips it as it skips
// them).
func TestProcsS3(t *testing.T) {
	if os.Getenv(s3test.OptOutEnv) == "1" {
		t.Skipf("S3 server tests skipped: %s=1 is set", s3test.OptOutEnv)
	}
	procsRun(t, "s3test")
}

// TestHistoryTornRecord pins the history reader: a last line SIGKILL tore
// is dropped, so its commit stays pending (ambiguous), and an
// acknowledgement counts only when its record is whole.
func TestHistoryTornRecord(t *testing.T) {
	dir := t.TempDir()
	w, err := createHist(filepath.Join(dir, "p00.s0000.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []histRecord{
		{Kind: recInvoke, Time: 1, Tag: "a", Key: "main#1", Tables: []string{"t0"}},
		{Kind: recOK, Time: 2, Tag: "a"},
		{Kind: recInvoke, Time: 3, Tag: "b", Key: "main#1", Tables: []string{"t0"}},
	} {
		if err := w.append(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.f.WriteString(`{"k":"ok","t":4,"ta`); err != nil {
		t.Fatal(err)
	}
	w.close()
	segs, err := readSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 1 || !segs[0].torn || len(segs[0].recs) != 3 {
		t.Fatalf("segments %+v", segs)
	}
	h, vs := buildHistory(segs)
	if len(vs) != 0 {
		t.Fatal(vs)
	}
	a, _ := h.Commit("a")
	b, _ := h.Commit("b")
	if a.Outcome != model.OK || b.Outcome != model.Ambiguous || !b.Pending {
		t.Fatalf("a %+v, b %+v", a, b)
	}
}

// TestProcsMaintFS pins -procs -workload maint on a filesystem store:
// writers forking, merging and deleting branches beside maintainers,
// a pinning reader and a feed consumer, maintainers adding properties
// (schema changes), a group writer whose committers share one handle
// with group commit on (grouped commits), all SIGKILLed and restarted; no
// violation, verify (run after every -procs run) clean, and index and
// fragment trees built (builtTrees).
func TestProcsMaintFS(t *testing.T) {
	code, out, errs := simrun(t, "-store", "fs:"+t.TempDir(), "-procs", "4", "-workload", "maint", "-duration", "5s", "-json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	m := decode(t, out)
	if m["violations"].(float64) != 0 || !strings.HasPrefix(m["verify"].(string), "clean") {
		t.Fatalf("violations %v, verify %v\n%s", m["violations"], m["verify"], out)
	}
	for _, k := range []string{"kills", "commits", "collections", "schema_changes", "grouped_commits"} {
		if v, _ := m[k].(float64); v <= 0 {
			t.Errorf("%s = %v, want > 0\n%s", k, m[k], out)
		}
	}
	builtTrees(t, m, out)
	t.Logf("%s", out)
}

// TestProcsSchemaFS pins -procs -workload schema on a filesystem store:
// writers staging rows under the schema their transaction began under
// while two changers rename properties and types, tightens and loosens
// @card, adds and drops properties, all SIGKILLed and restarted; no
// violation (schema chain linear, writes landed under their staged
// schema or refused with SchemaChangedError, acknowledged rows on main
// under the final names), verify clean, every kind of event seen, and
// index and fragment trees built (builtTrees).
func TestProcsSchemaFS(t *testing.T) {
	code, out, errs := simrun(t, "-store", "fs:"+t.TempDir(), "-procs", "6", "-workload", "schema", "-duration", "6s", "-json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	m := decode(t, out)
	if m["violations"].(float64) != 0 || !strings.HasPrefix(m["verify"].(string), "clean") {
		t.Fatalf("violations %v, verify %v\n%s", m["violations"], m["verify"], out)
	}
	for _, k := range []string{"kills", "commits", "writes", "schema_changes", "stale_refused"} {
		if v, _ := m[k].(float64); v <= 0 {
			t.Errorf("%s = %v, want > 0\n%s", k, m[k], out)
		}
	}
	if tr, pr := m["type_renames"], m["prop_renames"]; tr == nil && pr == nil { // each ~1 change in 7: one of them
		t.Errorf("no type or property rename acknowledged\n%s", out)
	}
	builtTrees(t, m, out)
	t.Logf("%s", out)
}

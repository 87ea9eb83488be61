package data

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestStagingCoalescesCalls: one-row calls with one op share an Arrow
// record of up to maxOpenRows rows (a record per call cost a few KB a row:
// the 6.85 GB load of issue #28), an op change seals the open write so
// call order holds, and a read sees the open rows.
func TestStagingCoalescesCalls(t *testing.T) {
	s := newStaging(testCatalog(t), Limits{MaxRows: 1 << 20, MaxBytes: 1 << 30})
	defer s.release()
	n := 2*maxOpenRows + 10
	for i := range n {
		must(t, s.stageRows(OpInsert, "Company", []Row{company(fmt.Sprintf("c%06d", i))}))
	}
	must(t, s.stageRows(OpUpsert, "Company", []Row{company("u1")}))
	must(t, s.stageRows(OpInsert, "Company", []Row{company("i1")}))
	st := s.tables["Company"]
	if _, ok := st.find("i1"); !ok {
		t.Fatal("the last staged row is not found")
	}
	var ops []string
	for _, w := range st.writes {
		ops = append(ops, fmt.Sprintf("%s:%d", w.op, w.rec.NumRows()))
	}
	want := fmt.Sprintf("insert:%d insert:%d insert:10 upsert:1 insert:1", maxOpenRows, maxOpenRows)
	if got := strings.Join(ops, " "); got != want {
		t.Fatalf("writes %s, want %s", got, want)
	}
	if len(st.index()) != n+2 {
		t.Fatalf("index has %d rows, want %d", len(st.index()), n+2)
	}
}

// TestStagedBytesBoundArrowBytes: the byte estimate the budget checks is
// at least the Arrow buffer bytes the staged rows occupy, for every kind,
// nulls and edges.
func TestStagedBytesBoundArrowBytes(t *testing.T) {
	s := newStaging(testCatalog(t), Limits{MaxRows: 1 << 20, MaxBytes: 1 << 30})
	defer s.release()
	for i := range 3000 {
		p := person(fmt.Sprintf("p%d", i), strings.Repeat("n", i%7))
		if i%3 == 0 {
			p.Props["age"], p.Props["score"], p.Props["active"], p.Props["avatar"] = int64(i), 1.5, true, []byte("xy")
		}
		must(t, s.stageRows(OpInsert, "Person", []Row{p}))
		must(t, s.stageRows(OpInsert, "Knows", []Row{edge(fmt.Sprintf("k%d", i), "p1", fmt.Sprintf("p%d", i))}))
	}
	var arrow int64
	for _, name := range s.names() {
		st := s.tables[name]
		st.seal()
		for _, w := range st.writes {
			arrow += recordBytes(w.rec)
		}
	}
	if arrow > s.bytes {
		t.Fatalf("Arrow buffers hold %d bytes, the estimate says %d", arrow, s.bytes)
	}
	if s.bytes > 2*arrow+int64(s.rows)*rowOverhead {
		t.Fatalf("estimate %d is more than twice the %d Arrow bytes plus the row charge", s.bytes, arrow)
	}
}

// TestByteBudgetError: a call past Limits.MaxBytes is an ErrTxnBytes
// (also ErrTooLarge and ErrValidation) naming the budget and how to raise
// it; it stages nothing, and Txn.Staged reports what is staged.
func TestByteBudgetError(t *testing.T) {
	s := newStaging(testCatalog(t), Limits{MaxRows: 100, MaxBytes: 300})
	defer s.release()
	var err error
	i := 0
	for ; err == nil && i < 100; i++ {
		err = s.stageRows(OpInsert, "Company", []Row{company(fmt.Sprintf("c%d", i))})
	}
	if !errors.Is(err, ErrTxnBytes) || !errors.Is(err, ErrTooLarge) || !errors.Is(err, ErrValidation) {
		t.Fatalf("past the budget: %v", err)
	}
	for _, want := range []string{"byte budget of 300 bytes", "MaxBytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
	if s.bytes > 300 || s.rows != i-1 {
		t.Fatalf("staged %d rows, %d bytes after the rejection; want %d rows within 300 bytes", s.rows, s.bytes, i-1)
	}
	if err := s.stageRows(OpInsert, "Company", []Row{company(strings.Repeat("x", 40))}); !errors.Is(err, ErrTxnBytes) {
		t.Fatalf("row limit is not the cause here: %v", err)
	}
}

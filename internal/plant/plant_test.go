package plant

import "testing"

// TestSwitches pins both builds: without simplant nothing can be enabled;
// with it, exactly the named bugs are, and unknown names are refused.
func TestSwitches(t *testing.T) {
	for _, n := range All() {
		if Enabled(n) {
			t.Fatalf("%s enabled before Enable", n)
		}
	}
	err := Enable(ReparentOnce)
	if !Built {
		if err == nil || Enabled(ReparentOnce) {
			t.Fatalf("normal build: Enable = %v, Enabled = %v", err, Enabled(ReparentOnce))
		}
		return
	}
	defer Enable()
	if err != nil || !Enabled(ReparentOnce) || Enabled(IgnoreLostAck) {
		t.Fatalf("simplant build: Enable = %v", err)
	}
	if err := Enable("no-such-bug"); err == nil || !Enabled(ReparentOnce) {
		t.Fatalf("unknown name accepted or set changed: %v", err)
	}
	if err := Enable(); err != nil || Enabled(ReparentOnce) {
		t.Fatalf("Enable() did not clear: %v", err)
	}
}

package gc

// SetBranchLocal switches the per-branch reachability bug on or off for a
// test that must go red with it.
func SetBranchLocal(on bool) { skipInherited = func() bool { return on } }

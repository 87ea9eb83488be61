package workload

// mixRotation is the default soak's rotation of workloads over seeds: the
// kernel core most often, every other workload regularly.
var mixRotation = []string{"core", "data", "core", "migrate", "contention", "maint", "data-drops", "migrate", "merge", "cuts", "lifetime", "schema", "data-group"}

func init() {
	Register(&Workload{
		Name: "mix",
		Doc:  "the default soak: seed N runs the workload at N mod 13 of core, data, core, migrate, contention, maint, data-drops, migrate, merge, cuts, lifetime, schema, data-group",
		Generate: func(seed uint64, faults string) *Scenario {
			w, _ := Lookup(mixRotation[seed%uint64(len(mixRotation))])
			return w.Generate(seed, faults)
		},
	})
}

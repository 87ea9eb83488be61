package sim

import (
	"fmt"
	"sort"
	"time"

	objsim "github.com/graphkernel/graphkernel/objstore/sim"
)

// FaultProfile is a named set of seeded fault rates for the fault phase.
type FaultProfile struct {
	Name    string
	Store   objsim.Faults
	Crash   CrashConfig
	Buggify BuggifyConfig
	Machine MachineCrashConfig
}

// baseLatency is an object store's ordinary latency: every profile has it,
// and it stays in the quiet phase.
var baseLatency = objsim.Faults{LatencyMin: 5 * time.Millisecond, LatencyMax: 40 * time.Millisecond}

// defaultStore, defaultCrash and defaultBuggify are the default profile's
// rates (oscrash adds machine crashes to them).
var (
	defaultStore = objsim.Faults{
		TransientRate: 0.02, ConflictRate: 0.01, LostAckRate: 0.01, ReadOutageAfterLostAck: 2,
		LatencyMin: baseLatency.LatencyMin, LatencyMax: baseLatency.LatencyMax,
		SpikeRate: 0.01, SpikeLatency: 2 * time.Second,
	}
	defaultCrash   = CrashConfig{AtCall: 0.0005, AfterWrite: 0.004, Max: 3}
	defaultBuggify = BuggifyConfig{SiteProb: 0.3, FireProb: 0.05, CrashShare: 0.3}
)

var profiles = map[string]FaultProfile{
	"none":    {Name: "none", Store: baseLatency},
	"default": {Name: "default", Store: defaultStore, Crash: defaultCrash, Buggify: defaultBuggify},
	// oscrash is default plus machine crashes: the store defers
	// durability as objstore/fs does, and a power loss crashes every
	// process and loses (reverts, tears) what was not yet durable.
	"oscrash": {
		Name: "oscrash", Store: defaultStore, Crash: defaultCrash, Buggify: defaultBuggify,
		Machine: MachineCrashConfig{Rate: 0.002, Max: 2, Keep: 0.2, Tear: 0.5},
	},
	"heavy": {
		Name: "heavy",
		Store: objsim.Faults{
			TransientRate: 0.08, ConflictRate: 0.04, LostAckRate: 0.04, ReadOutageAfterLostAck: 12,
			LatencyMin: baseLatency.LatencyMin, LatencyMax: baseLatency.LatencyMax,
			SpikeRate: 0.03, SpikeLatency: 5 * time.Second,
		},
		Crash:   CrashConfig{AtCall: 0.002, AfterWrite: 0.01, Max: 6},
		Buggify: BuggifyConfig{SiteProb: 0.5, FireProb: 0.15, CrashShare: 0.3},
	},
}

// Profile returns the named fault profile: "none" (latency only),
// "default", "heavy" or "oscrash" (default plus machine crashes).
func Profile(name string) (FaultProfile, error) {
	p, ok := profiles[name]
	if !ok {
		return FaultProfile{}, fmt.Errorf("sim: unknown fault profile %q (known: %v)", name, ProfileNames())
	}
	return p, nil
}

// ProfileNames lists the fault profiles, sorted.
func ProfileNames() []string {
	out := make([]string, 0, len(profiles))
	//detlint:ordered collects names, sorted next
	for n := range profiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Apply copies the profile's rates into cfg.
func (p FaultProfile) Apply(cfg Config) Config {
	cfg.Faults, cfg.Crash, cfg.Buggify, cfg.Machine = p.Store, p.Crash, p.Buggify, p.Machine
	return cfg
}

package workload

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
)

// Bounds on a scenario, so a fuzzer or a corrupt case file cannot ask for an
// unbounded run.
const (
	MaxScenarioActors = 64
	MaxActorOps       = 4096
	MaxPhase          = 24 * time.Hour
)

// Scenario is one replayable simulation: the workload and fault profile, the
// seed, the phase lengths, and every actor's operations in order. Generated
// from a seed or parsed from a case file; shrinking removes actors and ops.
type Scenario struct {
	Workload   string
	Seed       uint64
	Faults     string
	FaultPhase time.Duration
	QuietPhase time.Duration
	// Riding is the riding budget of every process's kernel handles
	// (kernel.Options.RidingBudget; zero: the format's maxima), chosen per
	// seed (ridingFor) so that manifests go over budget and versions spill
	// to objects beside riding ones. Case files write it as
	// "riding VERSION MANIFEST" (bytes), absent when zero.
	Riding kernel.RidingBudget
	Actors []ActorPlan
}

// ActorPlan is one simulated process's program.
type ActorPlan struct {
	Name string
	Ops  []Op
	// Clock is how far the actor's host clock is off the world's (its
	// kernel and maintenance handles read world time + Clock; checkers
	// keep the world's); 0: exact. Case files write it as
	// "actor NAME clock=DURATION".
	Clock time.Duration
}

// Op is one operation: its kind, the think time before it, and its
// arguments. Keys and values are single words without '=' or spaces.
type Op struct {
	Kind  string
	Think time.Duration
	Args  map[string]string
}

// Arg returns the argument k ("" if absent).
func (o Op) Arg(k string) string { return o.Args[k] }

// Flag reports whether argument k is "1" or "true".
func (o Op) Flag(k string) bool { return o.Args[k] == "1" || o.Args[k] == "true" }

// List splits argument k on commas (nil if absent).
func (o Op) List(k string) []string {
	if o.Args[k] == "" {
		return nil
	}
	return strings.Split(o.Args[k], ",")
}

// Ops counts the scenario's operations.
func (s *Scenario) Ops() int {
	n := 0
	for _, a := range s.Actors {
		n += len(a.Ops)
	}
	return n
}

// Clone returns a deep copy.
func (s *Scenario) Clone() *Scenario {
	out := *s
	out.Actors = make([]ActorPlan, len(s.Actors))
	for i, a := range s.Actors {
		out.Actors[i] = ActorPlan{Name: a.Name, Ops: make([]Op, len(a.Ops)), Clock: a.Clock}
		for j, op := range a.Ops {
			args := make(map[string]string, len(op.Args))
			//detlint:ordered copies into a map
			for k, v := range op.Args {
				args[k] = v
			}
			out.Actors[i].Ops[j] = Op{Kind: op.Kind, Think: op.Think, Args: args}
		}
	}
	return &out
}

// caseHeader starts every case file.
const caseHeader = "simcase v1"

// Format writes the scenario in the case-file text form, which Parse reads
// back to an equal scenario.
func (s *Scenario) Format(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nworkload %s\nseed %d\nfaults %s\nphases %s %s\n",
		caseHeader, s.Workload, s.Seed, s.Faults, s.FaultPhase, s.QuietPhase)
	if s.Riding != (kernel.RidingBudget{}) {
		fmt.Fprintf(&b, "riding %d %d\n", s.Riding.VersionBytes, s.Riding.ManifestBytes)
	}
	for _, a := range s.Actors {
		if a.Clock != 0 {
			fmt.Fprintf(&b, "actor %s clock=%s\n", a.Name, a.Clock)
		} else {
			fmt.Fprintf(&b, "actor %s\n", a.Name)
		}
		for _, op := range a.Ops {
			fmt.Fprintf(&b, "  %s %s", op.Think, op.Kind)
			keys := make([]string, 0, len(op.Args))
			//detlint:ordered collects keys, sorted next
			for k := range op.Args {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, " %s=%s", k, op.Args[k])
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String returns the case-file text.
func (s *Scenario) String() string {
	var b strings.Builder
	_ = s.Format(&b)
	return b.String()
}

// Parse reads a case file. Errors name the line.
func Parse(r io.Reader) (*Scenario, error) {
	sc := bufio.NewScanner(r)
	s := &Scenario{}
	line := 0
	fail := func(f string, a ...any) (*Scenario, error) {
		return nil, fmt.Errorf("simcase line %d: %s", line, fmt.Sprintf(f, a...))
	}
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), " \t\r")
		if text == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
			continue
		}
		if line == 1 || (s.Workload == "" && text == caseHeader) {
			if text != caseHeader {
				return fail("want %q", caseHeader)
			}
			continue
		}
		if err := s.parseLine(text); err != nil {
			return fail("%v", err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("simcase: %w", err)
	}
	if line == 0 {
		return nil, fmt.Errorf("simcase: empty")
	}
	return s, s.Validate()
}

func (s *Scenario) parseLine(text string) error {
	f := strings.Fields(text)
	if strings.HasPrefix(text, " ") {
		if len(s.Actors) == 0 {
			return fmt.Errorf("operation before any actor")
		}
		op, err := parseOp(f)
		if err != nil {
			return err
		}
		a := &s.Actors[len(s.Actors)-1]
		a.Ops = append(a.Ops, op)
		return nil
	}
	var err error
	switch {
	case f[0] == "workload" && len(f) == 2:
		s.Workload = f[1]
	case f[0] == "seed" && len(f) == 2:
		s.Seed, err = strconv.ParseUint(f[1], 10, 64)
	case f[0] == "faults" && len(f) == 2:
		s.Faults = f[1]
	case f[0] == "phases" && len(f) == 3:
		if s.FaultPhase, err = time.ParseDuration(f[1]); err == nil {
			s.QuietPhase, err = time.ParseDuration(f[2])
		}
	case f[0] == "riding" && len(f) == 3:
		if s.Riding.VersionBytes, err = strconv.Atoi(f[1]); err == nil {
			s.Riding.ManifestBytes, err = strconv.Atoi(f[2])
		}
	case f[0] == "actor" && len(f) == 2:
		s.Actors = append(s.Actors, ActorPlan{Name: f[1]})
	case f[0] == "actor" && len(f) == 3 && strings.HasPrefix(f[2], "clock="):
		a := ActorPlan{Name: f[1]}
		a.Clock, err = time.ParseDuration(strings.TrimPrefix(f[2], "clock="))
		s.Actors = append(s.Actors, a)
	default:
		return fmt.Errorf("cannot parse %q", text)
	}
	return err
}

func parseOp(f []string) (Op, error) {
	if len(f) < 2 {
		return Op{}, fmt.Errorf("operation needs a think time and a kind")
	}
	think, err := time.ParseDuration(f[0])
	if err != nil {
		return Op{}, err
	}
	op := Op{Kind: f[1], Think: think, Args: map[string]string{}}
	for _, kv := range f[2:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.Contains(v, "=") {
			return Op{}, fmt.Errorf("argument %q is not key=value", kv)
		}
		if _, dup := op.Args[k]; dup {
			return Op{}, fmt.Errorf("argument %q repeated", k)
		}
		op.Args[k] = v
	}
	return op, nil
}

// Validate checks the scenario's bounds and that every op kind is known.
func (s *Scenario) Validate() error {
	if _, ok := Lookup(s.Workload); !ok {
		return fmt.Errorf("simcase: unknown workload %q", s.Workload)
	}
	if s.FaultPhase < 0 || s.QuietPhase <= 0 || s.FaultPhase > MaxPhase || s.QuietPhase > MaxPhase {
		return fmt.Errorf("simcase: phases %v %v out of bounds", s.FaultPhase, s.QuietPhase)
	}
	if !s.Riding.Valid() {
		return fmt.Errorf("simcase: riding budget %d %d out of bounds", s.Riding.VersionBytes, s.Riding.ManifestBytes)
	}
	if len(s.Actors) > MaxScenarioActors {
		return fmt.Errorf("simcase: %d actors exceeds %d", len(s.Actors), MaxScenarioActors)
	}
	names := map[string]bool{}
	for _, a := range s.Actors {
		if a.Name == "" || strings.HasPrefix(a.Name, "_") || strings.ContainsAny(a.Name, " \t=~.") || names[a.Name] {
			return fmt.Errorf("simcase: bad or repeated actor name %q", a.Name)
		}
		names[a.Name] = true
		if a.Clock < -MaxPhase || a.Clock > MaxPhase {
			return fmt.Errorf("simcase: actor %s: clock offset %v out of bounds", a.Name, a.Clock)
		}
		if len(a.Ops) > MaxActorOps {
			return fmt.Errorf("simcase: actor %s has %d ops, more than %d", a.Name, len(a.Ops), MaxActorOps)
		}
		for _, op := range a.Ops {
			if _, ok := opExec[op.Kind]; !ok {
				return fmt.Errorf("simcase: actor %s: unknown op %q", a.Name, op.Kind)
			}
			if op.Think < 0 || op.Think > MaxPhase {
				return fmt.Errorf("simcase: actor %s: think %v out of bounds", a.Name, op.Think)
			}
		}
	}
	return nil
}

package workload

import (
	"sync"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
)

// A service is one simulated process whose goroutines are several actors
// sharing one data handle (group commit, issue #31, needs callers that
// share a handle). An actor belongs to service S when its plan's ops carry
// svc=S. The service dies whole: when one of its actors crashes, the
// others are killed (sim.World.Kill) and all of them come back, each after
// the op it was in, as the next generation of the service with a fresh
// handle (restartService).

// service is one generation of a service: its shared data handle and its
// actors' processes.
type service struct {
	name string
	mu   sync.Mutex // real-store runs: the actors are real goroutines
	data *data.Graph
	// members are the processes of this generation.
	members []*Proc
	dead    bool
}

// serviceOf returns the service the plan's actor belongs to ("" if none).
func (a *ActorPlan) serviceOf() string {
	for _, op := range a.Ops {
		if s := op.Arg("svc"); s != "" {
			return s
		}
	}
	return ""
}

// joinService attaches p to the current generation of its plan's service
// (a new one if none is live).
func (r *Run) joinService(p *Proc) {
	name := p.plan.serviceOf()
	if name == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.services == nil {
		r.services = map[string]*service{}
	}
	s := r.services[name]
	if s == nil || s.dead {
		s = &service{name: name}
		r.services[name] = s
	}
	s.members = append(s.members, p)
	p.svc = s
}

// restartService is the crash callback of a service's actor: the whole
// generation dies (its other live actors are killed) and every actor that
// had not finished comes back in the next generation, after delay.
func (r *Run) restartService(p *Proc, delay time.Duration) {
	s := p.svc
	if s.dead {
		return // a sibling's crash already restarted this generation
	}
	s.dead = true
	for _, m := range s.members {
		if m.actor == nil || m.actor.Done() {
			continue // finished its plan: nothing to resume
		}
		r.W.Kill(m.actor)
		r.spawn(m.plan, m.next, m.gen+1, delay)
	}
}

// handle returns the service's shared data handle, opening it with p's
// environment on first use; its failpoints act for whichever actor runs
// (sim.World.SharedFailpoints).
func (s *service) handle(p *Proc) (*data.Graph, error) {
	s.mu.Lock()
	if g := s.data; g != nil {
		s.mu.Unlock()
		return g, nil
	}
	s.mu.Unlock()
	kopts := p.kopts()
	var fps *failpoint.Set
	if p.run.W != nil {
		fps = p.run.W.SharedFailpoints()
	}
	kopts.Env = kernel.Env{Clock: kopts.Env.Clock, Entropy: kopts.Env.Entropy, Failpoints: fps}
	g, err := data.Open(p.Ctx(), p.run.Store, p.run.Root, data.Options{Kernel: kopts, InlineFragments: simInlineFragments, IndexFanout: p.indexFanout(), JSONIndexChunks: p.jsonIndexChunks(), Group: serviceGroup(p)})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data == nil { // another actor may have opened it meanwhile: the first wins
		s.data = g
	}
	return s.data, nil
}

// serviceGroup is the group commit configuration of a service's handle:
// the plan's op arguments gwait (the leader's MaxWait), gregroup (its
// RegroupWait) and gfollow (a follower's MaxFollowerWait), polled every
// millisecond.
func serviceGroup(p *Proc) data.GroupOptions {
	o := data.GroupOptions{Enabled: true, Poll: time.Millisecond, MaxFollowerWait: 30 * time.Second}
	for _, op := range p.plan.Ops {
		if d, err := time.ParseDuration(op.Arg("gwait")); err == nil {
			o.MaxWait = d
		}
		if d, err := time.ParseDuration(op.Arg("gfollow")); err == nil {
			o.MaxFollowerWait = d
		}
		if d, err := time.ParseDuration(op.Arg("gregroup")); err == nil {
			o.RegroupWait = d
		}
	}
	return o
}

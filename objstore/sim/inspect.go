package sim

import (
	"math/rand/v2"
	"strings"
)

// Peek returns a copy of key's bytes and whether it exists, bypassing faults,
// hooks, counters and key validation. A torn object (see Torn) exists and
// has no bytes.
func (s *Store) Peek(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[key]
	if !ok {
		return nil, false
	}
	return clone(obj.data), true
}

// PeekETag returns key's current ETag and whether it exists, bypassing
// faults, hooks and counters.
func (s *Store) PeekETag(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[key]
	return obj.etag, ok
}

// Keys returns every key starting with prefix, sorted byte-wise, bypassing
// faults, hooks, counters and prefix validation. The slice is the caller's.
func (s *Store) Keys(prefix string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for c := s.keys.seek(prefix); ; c = s.keys.next(c) {
		k, ok := s.keys.at(c)
		if !ok || !strings.HasPrefix(k, prefix) {
			return out
		}
		out = append(out, k)
	}
}

// Len returns the number of stored objects.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys.n
}

// Clone returns an independent deep copy of the contents with the same
// configuration (seed, current faults, hook), random streams restarted from
// the seed, fresh counters and call numbering, and the ETag counter carried
// over so the clone never reissues an ETag its objects already hold. The
// clone keeps which objects are volatile or torn (its crash stream, too,
// restarts from the seed). Use it
// to freeze the durable state at a crash cut; call SetHook(nil) and
// SetFaults(Faults{}) on the clone to inspect it undisturbed.
func (s *Store) Clone() *Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &Store{
		cfg:        s.cfg,
		latencyRNG: rand.New(rand.NewPCG(s.cfg.Seed, streamLatency)),
		faultRNG:   rand.New(rand.NewPCG(s.cfg.Seed, streamFaults)),
		objects:    make(map[string]object, len(s.objects)),
		keys:       s.keys.clone(),
		etagSeq:    s.etagSeq,
	}
	//detlint:ordered copies into another map; no order reaches anything
	for k, obj := range s.objects {
		out.objects[k] = object{data: clone(obj.data), etag: obj.etag, torn: obj.torn}
	}
	if len(s.volatile) > 0 {
		out.volatile = make(map[string]pending, len(s.volatile))
		//detlint:ordered copies into another map; no order reaches anything
		for k, p := range s.volatile {
			p.durable.data = clone(p.durable.data)
			out.volatile[k] = p
		}
	}
	return out
}

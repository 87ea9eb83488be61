package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/graphkernel/graphkernel/objstore"
)

// defaultStatusEvery is how often long work prints a status line when
// stderr is not a terminal (app.statusEvery overrides it).
const defaultStatusEvery = 10 * time.Second

// Redraw and clock-read throttles: a terminal line is redrawn at most every
// ttyRedraw; the clock is read once per clockEvery counted items.
const (
	ttyRedraw  = 200 * time.Millisecond
	clockEvery = 1024
)

// meter reports the progress of one long operation on stderr, by the
// command's clock (app.now): on a terminal one line redrawn in place (items,
// items/s, bytes, and a percentage and ETA when the input size is known);
// otherwise one status line every app.statusEvery. It never writes to
// stdout, so --json documents stay clean. Safe for concurrent use.
type meter struct {
	a          *app
	what       string // the subcommand, e.g. "load"
	unit       string // what is counted, e.g. "rows"
	total      int64  // bytes the operation will consume; 0 unknown
	every      int    // items per clock read (clockEvery; 1 for store requests)
	totalItems int64  // items the operation will count; 0 unknown (used when total is 0)

	mu      sync.Mutex
	start   time.Time
	last    time.Time // last line printed (or redrawn)
	items   int64
	bytes   int64
	pending int // items since the clock was last read
	drawn   bool
}

// newMeter starts a meter; totalBytes is the input size, 0 when unknown.
func (a *app) newMeter(what, unit string, totalBytes int64) *meter {
	now := a.now()
	return &meter{a: a, what: what, unit: unit, total: totalBytes, every: clockEvery, start: now, last: now}
}

// add counts n items and b bytes, printing a line when one is due.
func (m *meter) add(n, b int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.items += n
	m.bytes += b
	if m.pending += int(max(n, 1)); m.pending < m.every {
		return
	}
	m.pending = 0
	m.tick()
}

// flush reads the clock now (a unit of work finished: a transaction, a
// page, a table), printing a line when one is due.
func (m *meter) flush() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = 0
	m.tick()
}

func (m *meter) tick() {
	now := m.a.now()
	every := m.a.statusEvery
	if every <= 0 {
		every = defaultStatusEvery
	}
	if m.a.tty {
		every = ttyRedraw
	}
	if now.Sub(m.last) < every {
		return
	}
	m.last = now
	if m.a.tty {
		fmt.Fprintf(m.a.stderr, "\r\033[K%s", m.line(now))
		m.drawn = true
		return
	}
	fmt.Fprintf(m.a.stderr, "graphkernel %s: %s\n", m.what, m.line(now))
}

// line renders "120000 rows, 8.1 MB of 40.2 MB (20%), 60000 rows/s, ETA 8s".
func (m *meter) line(now time.Time) string {
	el := now.Sub(m.start)
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", m.items, m.unit)
	if m.bytes > 0 || m.total > 0 {
		fmt.Fprintf(&b, ", %s", sizeOf(m.bytes))
		if m.total > 0 {
			fmt.Fprintf(&b, " of %s (%d%%)", sizeOf(m.total), min(100, m.bytes*100/m.total))
		}
	}
	if m.total == 0 && m.totalItems > 0 {
		fmt.Fprintf(&b, " of %d (%d%%)", m.totalItems, min(100, m.items*100/m.totalItems))
	}
	if el > 0 {
		fmt.Fprintf(&b, ", %.0f %s/s", float64(m.items)/el.Seconds(), m.unit)
	}
	done, total := m.bytes, m.total
	if total == 0 {
		done, total = m.items, m.totalItems
	}
	if total > 0 && done > 0 && done < total && el > 0 {
		eta := time.Duration(float64(el) * float64(total-done) / float64(done))
		fmt.Fprintf(&b, ", ETA %s", eta.Round(time.Second))
	}
	fmt.Fprintf(&b, ", %s elapsed", el.Round(time.Second))
	return b.String()
}

// done ends the meter: the terminal line is cleared.
func (m *meter) done() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.drawn {
		fmt.Fprint(m.a.stderr, "\r\033[K")
		m.drawn = false
	}
}

// sizeOf renders a byte count: "812 B", "8.1 kB", "40.2 MB", "1.3 GB".
func sizeOf(n int64) string {
	const k = 1000
	switch {
	case n < k:
		return fmt.Sprintf("%d B", n)
	case n < k*k:
		return fmt.Sprintf("%.1f kB", float64(n)/k)
	case n < k*k*k:
		return fmt.Sprintf("%.1f MB", float64(n)/(k*k))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(k*k*k))
}

// meteredStore counts a store's requests (and the bytes they move) on a
// meter: the progress of verify and maintain, whose work is store I/O.
type meteredStore struct {
	objstore.Store
	m        *meter
	requests bool // count requests as the meter's items (else bytes only)
}

// meterStore returns st counted on a new meter of requests (the clock is
// read after every request: each is a round trip).
func (a *app) meterStore(st objstore.Store, what string) (objstore.Store, *meter) {
	m := a.newMeter(what, "requests", 0)
	m.every = 1
	return &meteredStore{Store: st, m: m, requests: true}, m
}

// count records one request that moved b bytes.
func (s *meteredStore) count(b int64) {
	if s.requests {
		s.m.add(1, b)
		return
	}
	s.m.add(0, b)
	s.m.flush()
}

// storeBytes makes openGraph count the bytes of every store request on m
// (and read the clock after each: a status line is due even while a page
// of changes is still being computed).
func (a *app) storeBytes(m *meter) {
	a.wrapStore = func(st objstore.Store) objstore.Store { return &meteredStore{Store: st, m: m} }
}

func (s *meteredStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	obj, err := s.Store.Get(ctx, key)
	s.count(int64(len(obj.Data)))
	return obj, err
}

func (s *meteredStore) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	a, err := s.Store.Head(ctx, key)
	s.count(0)
	return a, err
}

func (s *meteredStore) List(ctx context.Context, prefix, startAfter string, limit int) (objstore.ListPage, error) {
	p, err := s.Store.List(ctx, prefix, startAfter, limit)
	s.count(0)
	return p, err
}

func (s *meteredStore) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	v, err := s.Store.Put(ctx, key, data, cond)
	s.count(int64(len(data)))
	return v, err
}

func (s *meteredStore) Delete(ctx context.Context, key string) error {
	err := s.Store.Delete(ctx, key)
	s.count(0)
	return err
}

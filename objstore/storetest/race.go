package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

const (
	raceWriters = 16
	raceKeys    = 200
	// raceAttempts bounds the retries of one create-only write.
	raceAttempts = 100
	casWorkers   = 8
	casIncrement = 100
	// casAttempts bounds the Get+Put attempts of one increment.
	casAttempts = 10000
)

// testCreateOnlyRace: 16 writers create the same 200 keys at once; each key
// has exactly one winner and holds the winner's bytes. The writers meet at a
// barrier before every key, so all 16 Puts of a key overlap: a backend that
// checks existence and then writes, non-atomically, loses here.
func testCreateOnlyRace(t *testing.T, s objstore.Store) {
	won := make([][]bool, raceWriters)
	bar := newBarrier(raceWriters)
	errs := make(chan error, raceWriters)
	var wg sync.WaitGroup
	for w := range raceWriters {
		won[w] = make([]bool, raceKeys)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer bar.leave()
			for k := range raceKeys {
				bar.wait()
				ok, err := createOnce(t, s, raceKey(k), writerID(w))
				if err != nil {
					errs <- err
					return
				}
				won[w][k] = ok
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	for k := range raceKeys {
		checkOneWinner(t, s, k, won)
	}
}

func raceKey(k int) string  { return fmt.Sprintf("race/%03d", k) }
func writerID(w int) []byte { return []byte(fmt.Sprintf("writer-%02d", w)) }

// checkOneWinner asserts key k has exactly one winner holding its bytes.
func checkOneWinner(t *testing.T, s objstore.Store, k int, won [][]bool) {
	t.Helper()
	winner := -1
	for w := range won {
		if !won[w][k] {
			continue
		}
		if winner >= 0 {
			t.Errorf("%s: writers %d and %d both won", raceKey(k), winner, w)
			return
		}
		winner = w
	}
	if winner < 0 {
		t.Errorf("%s: no writer won", raceKey(k))
		return
	}
	data, err := getRetrying(t, s, raceKey(k))
	if err != nil {
		t.Errorf("%s: %v", raceKey(k), err)
	} else if !bytes.Equal(data, writerID(winner)) {
		t.Errorf("%s holds %q, but the winner was %q", raceKey(k), data, writerID(winner))
	}
}

// createOnce writes id under key with CreateOnly and reports whether this
// writer won. Conflicts and transient failures are retried (bounded); an
// ambiguous outcome is resolved by reading the key back.
func createOnce(t *testing.T, s objstore.Store, key string, id []byte) (bool, error) {
	maybeApplied := false
	for range raceAttempts {
		_, err := s.Put(t.Context(), key, id, objstore.CreateOnly)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, objstore.ErrPreconditionFailed) && !maybeApplied:
			return false, checkErr(err, objstore.ErrPreconditionFailed, objstore.OpPut, key)
		case errors.Is(err, objstore.ErrPreconditionFailed) || objstore.IsAmbiguous(err):
			maybeApplied = true
			data, found, rerr := readBack(t, s, key)
			if rerr != nil || !found {
				continue // unknown or not applied: try again
			}
			return bytes.Equal(data, id), nil
		case objstore.IsRetryable(err):
			continue
		default:
			return false, fmt.Errorf("create-only Put(%q): unexpected error %w", key, err)
		}
	}
	return false, fmt.Errorf("create-only Put(%q): retry budget of %d exhausted", key, raceAttempts)
}

// getRetrying reads key, retrying retryable failures a bounded number of
// times; a missing key is an error.
func getRetrying(t *testing.T, s objstore.Store, key string) ([]byte, error) {
	for range raceAttempts {
		data, found, err := readBack(t, s, key)
		switch {
		case err == nil && found:
			return data, nil
		case err == nil:
			return nil, fmt.Errorf("Get(%q): not found", key)
		case !objstore.IsRetryable(err):
			return nil, fmt.Errorf("Get(%q): %w", key, err)
		}
	}
	return nil, fmt.Errorf("Get(%q): retry budget of %d exhausted", key, raceAttempts)
}

// readBack returns key's bytes and whether it exists; a transient read error
// is returned for the caller to retry.
func readBack(t *testing.T, s objstore.Store, key string) ([]byte, bool, error) {
	obj, err := s.Get(t.Context(), key)
	switch {
	case err == nil:
		return obj.Data, true, nil
	case errors.Is(err, objstore.ErrNotFound):
		return nil, false, nil
	}
	return nil, false, err
}

// testIfMatchCounter: 8 workers each add 1 a hundred times to a decimal
// counter with Get + Put(IfMatch); no increment is lost or doubled. The
// workers run in lockstep rounds (all Get, barrier, all Put, barrier), so
// every round is a maximal collision: exactly one Put may win it.
func testIfMatchCounter(t *testing.T, s objstore.Store) {
	mustPut(t, s, "counter", []byte("0"), objstore.CreateOnly)
	bar := newBarrier(casWorkers)
	errs := make(chan error, casWorkers)
	var wg sync.WaitGroup
	for range casWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer bar.leave()
			if err := incrementAll(t, s, "counter", bar); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	want := strconv.Itoa(casWorkers * casIncrement)
	if got, err := getRetrying(t, s, "counter"); err != nil || string(got) != want {
		t.Errorf("counter = %q (%v), want %s", got, err, want)
	}
}

// incrementAll adds casIncrement to the counter at key, one compare-and-swap
// round at a time, with at most casAttempts rounds per increment.
func incrementAll(t *testing.T, s objstore.Store, key string, bar *barrier) error {
	for wins, attempts := 0, 0; wins < casIncrement; attempts++ {
		if attempts == casAttempts {
			return fmt.Errorf("counter increment: retry budget of %d exhausted", casAttempts)
		}
		obj, n, ok, err := readCounter(t, s, key)
		if err != nil {
			return err
		}
		bar.wait()
		if ok {
			won, err := swapCounter(t, s, key, obj.ETag, n+1)
			if err != nil {
				return err
			}
			if won {
				wins, attempts = wins+1, -1
			}
		}
		bar.wait()
	}
	return nil
}

// readCounter reads the counter; ok is false after a retryable failure.
func readCounter(t *testing.T, s objstore.Store, key string) (objstore.Object, int, bool, error) {
	obj, err := s.Get(t.Context(), key)
	if err != nil {
		if objstore.IsRetryable(err) {
			return obj, 0, false, nil
		}
		return obj, 0, false, fmt.Errorf("counter Get: %w", err)
	}
	n, err := strconv.Atoi(string(obj.Data))
	if err != nil {
		return obj, 0, false, fmt.Errorf("counter holds %q: %w", obj.Data, err)
	}
	return obj, n, true, nil
}

// swapCounter writes next if the counter still has etag and reports whether
// it did. An ambiguous Put cannot be resolved by reading a bare counter back,
// so it fails the test rather than guess.
func swapCounter(t *testing.T, s objstore.Store, key, etag string, next int) (bool, error) {
	_, err := s.Put(t.Context(), key, []byte(strconv.Itoa(next)), objstore.IfMatch(etag))
	switch {
	case err == nil:
		return true, nil
	case objstore.IsAmbiguous(err):
		return false, fmt.Errorf("counter Put: ambiguous outcome, cannot resolve a bare counter: %w", err)
	case errors.Is(err, objstore.ErrPreconditionFailed):
		return false, checkErr(err, objstore.ErrPreconditionFailed, objstore.OpPut, key)
	case objstore.IsRetryable(err):
		return false, nil
	}
	return false, fmt.Errorf("counter Put: unexpected error %w", err)
}

// barrier is a reusable rendezvous for a group that shrinks as members
// finish: wait blocks until every remaining member waits; leave removes one.
type barrier struct {
	mu      sync.Mutex
	cond    *sync.Cond
	parties int
	waiting int
	round   uint64
}

func newBarrier(parties int) *barrier {
	b := &barrier{parties: parties}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *barrier) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	round := b.round
	b.waiting++
	if b.waiting >= b.parties {
		b.release()
		return
	}
	for round == b.round {
		b.cond.Wait()
	}
}

func (b *barrier) leave() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.parties--
	if b.waiting > 0 && b.waiting >= b.parties {
		b.release()
	}
}

func (b *barrier) release() {
	b.waiting = 0
	b.round++
	b.cond.Broadcast()
}

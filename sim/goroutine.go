package sim

// This file holds the world's only go statement (house rule 1 exempts it):
// an actor's goroutine blocks until the scheduler hands it the baton, so
// exactly one actor runs at a time.
func init() {
	startGoroutine = func(a *Actor, fn func(*Actor) error) { go a.main(fn) }
}

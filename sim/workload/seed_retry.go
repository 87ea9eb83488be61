package workload

import "github.com/graphkernel/graphkernel/sim/check"

// seedRetry runs a workload's seed step: once(attempt) for attempt 0, 1, ...
// until it returns nil, at most maxOpenAttempts times, pausing
// openRetryDelay after each failed attempt. It returns the error that ends
// the process if the process must end (crash or stop), and records a
// liveness violation saying never (e.g. "data seed never acknowledged") if
// every attempt failed.
func (p *Proc) seedRetry(never string, once func(attempt int) error) error {
	for attempt := 0; attempt < maxOpenAttempts; attempt++ {
		err := once(attempt)
		if err == nil {
			return nil
		}
		if p.Over(err) {
			return p.end(err)
		}
		if err := p.sleep(openRetryDelay); err != nil {
			return err
		}
	}
	p.run.Violate(check.Violation{Check: "liveness", Detail: never})
	return nil
}

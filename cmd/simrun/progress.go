package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// defaultStatusEvery is the default -status-every: how often a run whose
// output is not a terminal prints a status line on stderr.
const defaultStatusEvery = 10 * time.Second

// status prints a one-line status on w at the first call and then at most
// every `every` (the command's wall clock: simrun is a command, not
// kernel code).
type status struct {
	w     io.Writer
	every time.Duration
	start time.Time
	last  time.Time
	n     int
}

func newStatus(w io.Writer, every time.Duration) *status {
	return &status{w: w, every: every, start: time.Now()}
}

// printf prints the line when one is due, with the elapsed time appended.
func (s *status) printf(format string, args ...any) {
	now := time.Now()
	if s.n > 0 && now.Sub(s.last) < s.every {
		return
	}
	s.n++
	s.last = now
	fmt.Fprintf(s.w, "simrun: "+format+", %s elapsed\n", append(args, now.Sub(s.start).Round(time.Second))...)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressTo returns the progress callback: a one-line bar redrawn in place
// when stdout is a terminal and the summary is not JSON; otherwise a status
// line on stderr at the first seed and then every c.statusEvery (seeds
// done, failing, seeds/s, ETA). done < 0 ends the progress.
func progressTo(c *config, stdout, stderr io.Writer) func(done, total, failing int) {
	if c.json || !isTerminal(stdout) {
		st := newStatus(stderr, c.statusEvery)
		return func(done, total, failing int) {
			if done <= 0 {
				return
			}
			el := time.Since(st.start)
			rate := float64(done) / max(el.Seconds(), 1e-9)
			if total <= 0 || total >= 1<<30 {
				st.printf("%d seeds, %d failing, %.1f seeds/s", done, failing, rate)
				return
			}
			eta := time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second)
			st.printf("%d/%d seeds, %d failing, %.1f seeds/s, ETA %s", done, total, failing, rate, eta)
		}
	}
	return func(done, total, failing int) {
		if done < 0 {
			fmt.Fprint(stdout, "\r\033[K")
			return
		}
		fmt.Fprint(stdout, "\r"+bar(done, total, failing, 30))
	}
}

// bar renders "[#####.....] 12/300 seeds, 0 failing" (no total with
// -duration).
func bar(done, total, failing, width int) string {
	if total <= 0 || total >= 1<<30 {
		return fmt.Sprintf("%d seeds, %d failing", done, failing)
	}
	n := done * width / total
	return fmt.Sprintf("[%s%s] %d/%d seeds, %d failing", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total, failing)
}

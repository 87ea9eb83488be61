package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

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
// when stdout is a terminal and the summary is not JSON, nothing otherwise.
// done < 0 clears the line.
func progressTo(c *config, stdout io.Writer) func(done, total, failing int) {
	if c.json || !isTerminal(stdout) {
		return func(int, int, int) {}
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

package main

import (
	"fmt"
	"strings"
)

// progress draws one status line on stderr, only when it is a terminal
// (never into a pipe, a file or a test's buffer). With total > 0 it draws a
// bar of done/total.
func (a *app) progress(label string, done, total uint64) {
	if !a.tty {
		return
	}
	if total == 0 {
		fmt.Fprintf(a.stderr, "\r\033[K%s", label)
		return
	}
	const width = 30
	n := int(min(done, total) * width / total)
	fmt.Fprintf(a.stderr, "\r\033[K[%s%s] %s %d/%d", strings.Repeat("#", n), strings.Repeat(".", width-n), label, done, total)
}

// endProgress ends the status line.
func (a *app) endProgress() {
	if a.tty {
		fmt.Fprint(a.stderr, "\r\033[K")
	}
}

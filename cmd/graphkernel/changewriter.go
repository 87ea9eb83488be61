package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/graphkernel/graphkernel/kernel/changefeed"
)

// changeWriter prints changes as they arrive, one page at a time (it holds
// no change after writing it). --json output is still one JSON document:
// the header fields, then "changes" (one change a line), then "count" and
// "truncated". If the command fails part-way the document is left
// unterminated and the exit status is 1.
type changeWriter struct {
	w         *bufio.Writer
	json      bool
	limit     int64 // 0: no limit
	n         int64 // changes written
	truncated bool  // the limit cut the output: more changes follow
	err       error // first encoding error
}

func newChangeWriter(w io.Writer, asJSON bool, limit int64) *changeWriter {
	return &changeWriter{w: bufio.NewWriter(w), json: asJSON, limit: limit}
}

// full reports whether the limit has been reached.
func (c *changeWriter) full() bool { return c.limit > 0 && c.n >= c.limit }

// header opens the JSON document with name/value pairs, then the
// "changes" array.
func (c *changeWriter) header(pairs ...any) {
	c.w.WriteString("{\n")
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(c.w, "  %q: %s,\n", pairs[i], c.marshal(pairs[i+1]))
	}
	c.w.WriteString(`  "changes": [`)
}

func (c *changeWriter) textf(format string, args ...any) { fmt.Fprintf(c.w, format, args...) }

func (c *changeWriter) marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("encode output: %w", err)
	}
	return b
}

// change writes one change.
func (c *changeWriter) change(ch changefeed.Change) {
	cj := toChangeJSON(ch)
	if c.json {
		if c.n > 0 {
			c.w.WriteString(",")
		}
		c.w.WriteString("\n    ")
		c.w.Write(c.marshal(cj))
	} else {
		c.w.WriteString(c.line(cj))
	}
	c.n++
}

// line renders a change as text: op, type, id, the edge's endpoints, then
// an insert's or delete's properties (name=value) or an update's changed
// properties (name: before -> after). Values are JSON (strings quoted).
func (c *changeWriter) line(cj changeJSON) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %s %s", cj.Op, cj.Type, cj.ID)
	if cj.Edge {
		fmt.Fprintf(&b, " (%s -> %s)", cj.From, cj.To)
	}
	names := make([]string, 0, len(cj.Props))
	for k := range cj.Props { //detlint:ordered sorted below
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, " %s=%s", k, c.marshal(cj.Props[k]))
	}
	for i, p := range cj.Changed {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s %s: %s -> %s", sep, p.Property, c.marshal(p.Before), c.marshal(p.After))
	}
	b.WriteByte('\n')
	return b.String()
}

// flush writes out what is buffered (after each page).
func (c *changeWriter) flush() error {
	if c.err != nil {
		return c.err
	}
	return c.w.Flush()
}

// finish closes the output with the count (and whether --limit cut it).
func (c *changeWriter) finish() error {
	if c.json {
		if c.n > 0 {
			c.w.WriteString("\n  ")
		}
		fmt.Fprintf(c.w, "],\n  \"count\": %d,\n  \"truncated\": %t\n}\n", c.n, c.truncated)
		return c.flush()
	}
	if c.n > 0 {
		c.w.WriteString("\n")
	}
	fmt.Fprintf(c.w, "%d change(s)", c.n)
	if c.truncated {
		fmt.Fprintf(c.w, " shown; cut at --limit %d, more follow", c.limit)
	}
	c.w.WriteString("\n")
	return c.flush()
}

package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"time"

	"github.com/graphkernel/graphkernel/objstore"
	objsim "github.com/graphkernel/graphkernel/objstore/sim"
)

// tracer hashes every trace event and keeps the first few as text.
type tracer struct {
	h     hash.Hash
	buf   []byte
	limit int
	lines []string
	cut   int // events not kept as text
}

func newTracer(limit int) tracer { return tracer{h: sha256.New(), limit: limit} }

// Trace record tags; they keep the hash unambiguous.
const (
	tagSched byte = iota + 1
	tagCall
	tagResult
	tagSleep
	tagEvent
)

func (t *tracer) begin(tag byte) { t.buf = append(t.buf[:0], tag) }

func (t *tracer) uint(v uint64) { t.buf = binary.AppendUvarint(t.buf, v) }

func (t *tracer) int(v int64) { t.buf = binary.AppendVarint(t.buf, v) }

func (t *tracer) str(s string) {
	t.uint(uint64(len(s)))
	t.buf = append(t.buf, s...)
}

func (t *tracer) end(line func() string) {
	t.h.Write(t.buf)
	if t.limit <= 0 {
		return
	}
	if len(t.lines) < t.limit {
		t.lines = append(t.lines, line())
		return
	}
	t.cut++
}

func (t *tracer) sched(actor int, now int64) {
	t.begin(tagSched)
	t.uint(uint64(actor))
	t.int(now)
	t.end(func() string { return fmt.Sprintf("%s run actor=%d", stamp(now), actor) })
}

func (t *tracer) call(actor int, c *objsim.Call) {
	t.begin(tagCall)
	t.uint(uint64(actor))
	t.uint(c.Seq)
	t.str(string(c.Op))
	t.str(c.Key)
	t.uint(uint64(c.Cond.Kind))
	t.str(c.Cond.ETag)
	t.uint(uint64(c.Size))
	t.int(int64(c.Latency))
	for _, k := range c.Keys { // a batched call only (DeleteMany, GetMany): other calls hash as before
		t.str(k)
	}
	if c.Durability != objstore.DurableNow || c.After > 0 {
		// Only calls through the Deferring view have them: every other
		// call hashes as it always did.
		t.uint(uint64(c.Durability))
		t.uint(uint64(c.After))
	}
	t.end(func() string {
		if len(c.Keys) > 0 {
			return fmt.Sprintf("  call #%d actor=%d %s %q (+%d keys) lat=%v", c.Seq, actor, c.Op, c.Key, len(c.Keys)-1, c.Latency)
		}
		return fmt.Sprintf("  call #%d actor=%d %s %q cond=%d/%s size=%d lat=%v%s",
			c.Seq, actor, c.Op, c.Key, c.Cond.Kind, c.Cond.ETag, c.Size, c.Latency, deferral(c))
	})
}

// deferral renders a call's deferral for the trace text.
func deferral(c *objsim.Call) string {
	switch {
	case c.Durability == objstore.DeferAll:
		return " defer=all"
	case c.Durability == objstore.DeferName:
		return " defer=name"
	case c.After > 0:
		return fmt.Sprintf(" after=%d", c.After)
	}
	return ""
}

func (t *tracer) result(seq uint64, applied bool, err error) {
	class := errClass(err)
	t.begin(tagResult)
	t.uint(seq)
	if applied {
		t.uint(1)
	} else {
		t.uint(0)
	}
	t.str(class)
	t.end(func() string { return fmt.Sprintf("  done #%d applied=%t result=%s", seq, applied, class) })
}

func (t *tracer) sleep(actor int, d time.Duration) {
	t.begin(tagSleep)
	t.uint(uint64(actor))
	t.int(int64(d))
	t.end(func() string { return fmt.Sprintf("  sleep actor=%d d=%v", actor, d) })
}

func (t *tracer) event(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	t.begin(tagEvent)
	t.str(s)
	t.end(func() string { return "# " + s })
}

func (t *tracer) sum() [32]byte {
	var out [32]byte
	copy(out[:], t.h.Sum(nil))
	return out
}

func (t *tracer) text() []string {
	out := append([]string(nil), t.lines...)
	if t.cut > 0 {
		out = append(out, fmt.Sprintf("... %d more events not kept (TraceLines=%d)", t.cut, t.limit))
	}
	return out
}

// stamp renders simulated nanoseconds as seconds with millisecond detail.
func stamp(ns int64) string { return fmt.Sprintf("[%10.3fs]", float64(ns)/1e9) }

// errClass names an error by its kind, never by text that could carry
// addresses: the trace hash must be the same in every process.
func errClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrCrashed):
		return "crashed"
	case errors.Is(err, ErrStopped):
		return "stopped"
	}
	class := "error"
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		class = "not-found"
	case errors.Is(err, objstore.ErrPreconditionFailed):
		class = "precondition-failed"
	case errors.Is(err, objstore.ErrConflict):
		class = "conflict"
	case errors.Is(err, objstore.ErrTransient):
		class = "transient"
	case errors.Is(err, objstore.ErrInvalidKey):
		class = "invalid-key"
	case errors.Is(err, objstore.ErrRejected):
		class = "rejected"
	}
	if objstore.IsAmbiguous(err) {
		class += "+ambiguous"
	}
	return class
}

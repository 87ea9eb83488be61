package gc

import "github.com/graphkernel/graphkernel/kernel/format"

// namedKey names a version named per attempt by its key alone (its number
// lives in the object and in the pins that name it).
type namedKey struct {
	Table   string
	Fork    format.ID
	Attempt format.ID
}

// markTable marks one table version and, for one named per attempt,
// records its number under its key.
func (m *Marks) markTable(k TableKey) {
	m.Tables[k] = true
	if k.Attempt != (format.ID{}) {
		m.named[namedKey{Table: k.Table, Fork: k.Fork, Attempt: k.Attempt}] = k.Version
	}
}

// NamedVersion completes the listed key of a version named per attempt
// (t.Attempt set, t.Version unknown) from the marks alone where they decide
// it, so the collector reads such a version only when its number matters:
//   - a pin of the root set (or a sidecar's plan) names it: its number
//     comes from the pin, and KeepTableVersion keeps it;
//   - no pin names it and no AnyFork mark (a sidecar's expected or read
//     version, by number on any fork) names its table: no rule that
//     depends on its number can keep it, so the key is returned as it is
//     (number 0, which no mark holds) and KeepTableVersion decides by its
//     attempt's age alone;
//   - otherwise needRead: an AnyFork mark of its table might name its
//     number, which only the object holds.
//
// So a collection reads old unpinned named versions only for tables a
// pending sidecar names, never for every version history left behind.
func NamedVersion(m *Marks, t TableKey) (k TableKey, needRead bool) {
	if v, ok := m.named[namedKey{Table: t.Table, Fork: t.Fork, Attempt: t.Attempt}]; ok {
		t.Version = v
		return t, false
	}
	return t, m.anyForkTables[t.Table]
}

// UnreadableNamedIsGarbage decides a version named per attempt whose bytes
// fail their integrity check or decode as corrupt: true when no mark names
// it (no kept manifest or sidecar plan pins it, and no AnyFork mark holds
// its number, which nobody can read), so it is an attempt that never
// published. A writer makes such a version durable only in its manifest's
// write (objstore.PutAfterDeferred, docs/invariants.md S11), so a crash
// before that may tear it, and only then; it is then judged by its
// attempt's age alone (KeepTableVersion with the number unknown) and
// marks nothing: whatever it names was never published through it. A
// marked one is a kept version damaged: false, and the collection fails
// loudly.
func UnreadableNamedIsGarbage(m *Marks, t TableKey) bool {
	if t.Attempt == (format.ID{}) {
		return false
	}
	if _, pinned := m.named[namedKey{Table: t.Table, Fork: t.Fork, Attempt: t.Attempt}]; pinned {
		return false
	}
	return !m.TableMarked(t)
}

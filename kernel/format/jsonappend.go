package format

import (
	"encoding/json"
	"strconv"
)

// Hand-written encoders of the objects every commit writes (manifest,
// table version, commit index and what they hold). They append exactly
// the bytes encoding/json emits for the fixed-width mirror structs
// (json.Marshal of manifestJSON, tableVersionJSON, commitIndexJSON, ...,
// which is what MarshalJSON returned before): same field order, same
// omissions, strings escaped as encoding/json escapes them (HTML-safe; a
// string needing any escape is encoded by encoding/json itself), without
// reflection or the compaction pass json.Marshal runs over every nested
// Marshaler's output. TestHandEncodersMatchEncodingJSON compares them with
// the mirrors' json.Marshal on random and hostile values.

// appendString appends s as a JSON string, byte for byte what json.Marshal
// emits for it: quotes and backslashes escaped with a backslash and the
// HTML characters <, > and & as \u003c, \u003e and \u0026, as
// encoding/json does; a string holding a control byte or any non-ASCII
// byte (whose escapes depend on UTF-8 validity) is encoded by
// encoding/json itself.
func appendString(b []byte, s string) []byte {
	orig := len(b)
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plainJSON[c] {
			continue
		}
		var esc string
		switch c {
		case '"':
			esc = `\"`
		case '\\':
			esc = `\\`
		case '<':
			esc = `\u003c`
		case '>':
			esc = `\u003e`
		case '&':
			esc = `\u0026`
		default: // a control or non-ASCII byte
			q, err := json.Marshal(s)
			if err != nil {
				panic("format: json.Marshal of a string: " + err.Error())
			}
			return append(b[:orig], q...)
		}
		b = append(b, s[start:i]...)
		b = append(b, esc...)
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendJSONString appends s as a JSON string, byte for byte what
// json.Marshal emits for it (HTML-safe escapes; see appendString). The
// data plane encodes the JSON it keeps in table-version metadata with it.
func AppendJSONString(b []byte, s string) []byte { return appendString(b, s) }

// plainJSON marks the bytes encoding/json copies into a string as they
// are: printable ASCII but for ", \, <, > and &.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' // DEL included
	}
	return t
}()

// appendID appends id as encoding/json does (its text form, quoted).
func appendID(b []byte, id ID) []byte {
	b = append(b, '"')
	b = append(b, make([]byte, 26)...)
	if err := id.MarshalTextTo(b[len(b)-26:]); err != nil {
		panic("format: ULID text: " + err.Error())
	}
	return append(b, '"')
}

// appendFixed appends v as a fixed-width counter (fixedU64.MarshalJSON).
func appendFixed(b []byte, v uint64) []byte {
	var d [CounterDigits]byte
	for i := CounterDigits - 1; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	b = append(b, '"')
	b = append(b, d[:]...)
	return append(b, '"')
}

func appendBool(b []byte, v bool) []byte {
	return strconv.AppendBool(b, v)
}

// appendBranchIdentity appends v's JSON (BranchIdentity.MarshalJSON).
func appendBranchIdentity(b []byte, v BranchIdentity) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, v.Name)
	b = append(b, `,"incarnation":`...)
	b = appendFixed(b, v.Incarnation)
	b = append(b, `,"incarnation_id":`...)
	b = appendID(b, v.IncarnationID)
	return append(b, '}')
}

// appendForkPoint appends v's JSON (ForkPoint.MarshalJSON).
func appendForkPoint(b []byte, v ForkPoint) []byte {
	b = append(b, `{"branch":`...)
	b = appendString(b, v.Branch)
	b = append(b, `,"incarnation":`...)
	b = appendFixed(b, v.Incarnation)
	b = append(b, `,"incarnation_id":`...)
	b = appendID(b, v.IncarnationID)
	b = append(b, `,"manifest_version":`...)
	b = appendFixed(b, v.ManifestVersion)
	b = append(b, `,"commit_id":`...)
	b = appendID(b, v.CommitID)
	return append(b, '}')
}

// appendTablePin appends v's JSON (TablePin.MarshalJSON).
func appendTablePin(b []byte, v TablePin) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, v.Name)
	b = append(b, `,"fork":`...)
	b = appendID(b, v.Fork)
	b = append(b, `,"version":`...)
	b = appendFixed(b, v.Version)
	b = append(b, `,"rows":`...)
	b = appendFixed(b, v.Rows)
	if !v.Attempt.IsZero() {
		b = append(b, `,"attempt":`...)
		b = appendID(b, v.Attempt)
	}
	if v.Riding != "" {
		b = append(b, `,"riding":`...)
		b = append(b, v.Riding...)
	}
	return append(b, '}')
}

// appendManifestRef appends v's JSON (ManifestRef.MarshalJSON).
func appendManifestRef(b []byte, v ManifestRef) []byte {
	b = append(b, `{"branch":`...)
	b = appendString(b, v.Branch)
	b = append(b, `,"incarnation":`...)
	b = appendFixed(b, v.Incarnation)
	b = append(b, `,"version":`...)
	b = appendFixed(b, v.Version)
	return append(b, '}')
}

// appendCommit appends v's JSON (json.Marshal of a Commit).
func appendCommit(b []byte, v *Commit) []byte {
	b = append(b, `{"id":`...)
	b = appendID(b, v.ID)
	if len(v.Parents) > 0 {
		b = append(b, `,"parents":[`...)
		for i, p := range v.Parents {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendID(b, p)
		}
		b = append(b, ']')
	}
	b = append(b, `,"actor":`...)
	b = appendString(b, v.Actor)
	b = append(b, `,"message":`...)
	b = appendString(b, v.Message)
	b = append(b, `,"time_unix_nano":`...)
	b = strconv.AppendInt(b, v.TimeUnixNano, 10)
	b = append(b, `,"kind":`...)
	b = appendString(b, string(v.Kind))
	if v.MergedFrom != nil {
		b = append(b, `,"merged_from":`...)
		b = appendManifestRef(b, *v.MergedFrom)
	}
	return append(b, '}')
}

// appendManifest appends m's JSON (Manifest.MarshalJSON). A manifest with
// a legacy block (the rare migration manifest) goes through its mirror.
func appendManifest(b []byte, m *Manifest) ([]byte, error) {
	if m.Legacy != nil {
		p, err := json.Marshal(manifestJSON{fixedU64(m.Version), m.Branch, m.ForkOf, m.Tombstone, m.Tables, m.Commit, m.Head, m.Schema,
			m.FormatStamp, m.Legacy})
		return append(b, p...), err
	}
	b = append(b, `{"version":`...)
	b = appendFixed(b, m.Version)
	b = append(b, `,"branch":`...)
	b = appendBranchIdentity(b, m.Branch)
	if m.ForkOf != nil {
		b = append(b, `,"fork_of":`...)
		b = appendForkPoint(b, *m.ForkOf)
	}
	b = append(b, `,"tombstone":`...)
	b = appendBool(b, m.Tombstone)
	if len(m.Tables) > 0 {
		b = append(b, `,"tables":[`...)
		for i, p := range m.Tables {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendTablePin(b, p)
		}
		b = append(b, ']')
	}
	if m.Commit != nil {
		b = append(b, `,"commit":`...)
		b = appendCommit(b, m.Commit)
	}
	b = append(b, `,"head":`...)
	b = appendID(b, m.Head)
	b = append(b, `,"schema":`...)
	b = appendString(b, m.Schema)
	b = append(b, `,"format_stamp":`...)
	b = strconv.AppendUint(b, uint64(m.FormatStamp), 10)
	return append(b, '}'), nil
}

// appendTableRef appends v's JSON (TableRef.MarshalJSON).
func appendTableRef(b []byte, v TableRef) []byte {
	b = append(b, `{"fork":`...)
	b = appendID(b, v.Fork)
	b = append(b, `,"version":`...)
	b = appendFixed(b, v.Version)
	if !v.Attempt.IsZero() {
		b = append(b, `,"attempt":`...)
		b = appendID(b, v.Attempt)
	}
	if v.Rides {
		b = append(b, `,"rides":true`...)
	}
	return append(b, '}')
}

// appendTableVersion appends t's JSON (TableVersion.MarshalJSON).
func appendTableVersion(b []byte, t *TableVersion) []byte {
	b = append(b, `{"table":`...)
	b = appendString(b, t.Table)
	b = append(b, `,"fork":`...)
	b = appendID(b, t.Fork)
	b = append(b, `,"version":`...)
	b = appendFixed(b, t.Version)
	if len(t.Fragments) > 0 {
		b = append(b, `,"fragments":[`...)
		for i, f := range t.Fragments {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, f)
		}
		b = append(b, ']')
	}
	b = append(b, `,"rows":`...)
	b = appendFixed(b, t.Rows)
	if len(t.Metadata) > 0 {
		b = append(b, `,"metadata":[`...)
		for i, kv := range t.Metadata {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			b = appendString(b, kv.Key)
			b = append(b, `,"value":`...)
			b = appendString(b, kv.Value)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if t.BasedOn != nil {
		b = append(b, `,"based_on":`...)
		b = appendTableRef(b, *t.BasedOn)
	}
	if t.ContentPreserving {
		b = append(b, `,"content_preserving":true`...)
	}
	if !t.Attempt.IsZero() {
		b = append(b, `,"attempt":`...)
		b = appendID(b, t.Attempt)
	}
	return append(b, '}')
}

// tableVersionBytes is the length of t's JSON, give or take its escapes.
func tableVersionBytes(t *TableVersion) int {
	n := 256
	for _, f := range t.Fragments {
		n += len(f) + 3
	}
	for _, kv := range t.Metadata {
		n += len(kv.Key) + len(kv.Value) + len(kv.Value)/8 + 20 // an info's quotes escaped
	}
	return n
}

// appendReachEntry appends v's JSON (ReachEntry.MarshalJSON).
func appendReachEntry(b []byte, v ReachEntry) []byte {
	b = append(b, `{"branch":`...)
	b = appendString(b, v.Branch)
	b = append(b, `,"incarnation":`...)
	b = appendFixed(b, v.Incarnation)
	b = append(b, `,"version":`...)
	b = appendFixed(b, v.Version)
	if v.Gen != 0 {
		b = append(b, `,"gen":`...)
		b = appendFixed(b, v.Gen)
	}
	return append(b, '}')
}

func appendReach(b []byte, key string, es []ReachEntry) []byte {
	if len(es) == 0 {
		return b
	}
	b = append(b, key...)
	for i, e := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendReachEntry(b, e)
	}
	return append(b, ']')
}

// appendCommitIndex appends x's JSON (CommitIndex.MarshalJSON).
func appendCommitIndex(b []byte, x *CommitIndex) []byte {
	b = append(b, `{"id":`...)
	b = appendID(b, x.ID)
	b = append(b, `,"at":`...)
	b = appendManifestRef(b, x.At)
	b = append(b, `,"complete":`...)
	b = appendBool(b, x.Complete)
	b = appendReach(b, `,"reach":[`, x.Reach)
	if x.Gen != 0 {
		b = append(b, `,"gen":`...)
		b = appendFixed(b, x.Gen)
	}
	b = appendReach(b, `,"folds":[`, x.Folds)
	return append(b, '}')
}

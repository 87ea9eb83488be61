package data

import (
	"encoding/base64"
	"sync"
)

// codecMemo remembers, per handle, the results of the pure decodes and
// encodes a warm commit repeats on strings that did not change since the
// last one: every table version re-lists the infos and the embedded bytes
// of the fragments it keeps, so the next commit's view of it would parse
// (and its successor re-encode) the same text again. Each entry is keyed
// by the whole input (and, for an info, the table its statistics are
// checked against), so a hit returns exactly what the computation
// returns; only successes are remembered, so a refusal is recomputed and
// reported as before. Results are shared, so their users never modify
// them (infos, statistics and embedded bytes are read-only once parsed).
// Each map holds at most memoEntries (infos) or memoEmbeds (embedded
// bytes) entries; one that would grow past them is emptied first.
type codecMemo struct {
	mu     sync.Mutex
	infos  map[infoKey]memoInfo // table and info JSON -> parsed
	b64dec map[string][]byte    // standard base64 -> bytes
	b64enc map[string]string    // bytes -> standard base64
}

// memoEntries bounds a codecMemo's infos (a few dozen inline table
// versions' worth) and memoEmbeds each of its embed maps (an entry holds
// at most MaxEmbeddedFragmentBytes bytes and their base64: under 300 KiB
// per map).
const (
	memoEntries = 256
	memoEmbeds  = 64
)

// infoKey is a fragment info's JSON and the table its statistics were
// checked against.
type infoKey struct {
	t   *Table
	raw string
}

// memoInfo is a parsed fragment info (Name and embed unset) and its
// decoded statistics.
type memoInfo struct {
	info  FragmentInfo
	stats fragStats
}

func newCodecMemo() *codecMemo {
	return &codecMemo{infos: map[infoKey]memoInfo{}, b64dec: map[string][]byte{}, b64enc: map[string]string{}}
}

// memoPut stores v under k in m, emptying m first when it holds limit
// entries.
func memoPut[K comparable, V any](m map[K]V, limit int, k K, v V) {
	if len(m) >= limit {
		clear(m)
	}
	m[k] = v
}

// info returns the remembered parse of fragment info JSON raw of table t.
func (m *codecMemo) info(t *Table, raw string) (memoInfo, bool) {
	if m == nil {
		return memoInfo{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.infos[infoKey{t, raw}]
	return v, ok
}

// putInfo remembers a successful parse of raw.
func (m *codecMemo) putInfo(t *Table, raw string, v memoInfo) {
	if m == nil {
		return
	}
	v.info.Name, v.info.embed = "", nil
	m.mu.Lock()
	defer m.mu.Unlock()
	memoPut(m.infos, memoEntries, infoKey{t, raw}, v)
}

// decodeEmbed returns the bytes of strict standard base64 text s (what
// base64.StdEncoding.Strict().DecodeString returns).
func (m *codecMemo) decodeEmbed(s string) ([]byte, error) {
	if m != nil {
		m.mu.Lock()
		b, ok := m.b64dec[s]
		m.mu.Unlock()
		if ok {
			return b, nil
		}
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || m == nil {
		return b, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	memoPut(m.b64dec, memoEmbeds, s, b)
	return b, nil
}

// encodeEmbed returns the standard base64 of b (what
// base64.StdEncoding.EncodeToString returns).
func (m *codecMemo) encodeEmbed(b []byte) string {
	if m == nil {
		return base64.StdEncoding.EncodeToString(b)
	}
	m.mu.Lock()
	s, ok := m.b64enc[string(b)]
	m.mu.Unlock()
	if ok {
		return s
	}
	s = base64.StdEncoding.EncodeToString(b)
	m.mu.Lock()
	defer m.mu.Unlock()
	memoPut(m.b64enc, memoEmbeds, string(b), s)
	return s
}

package data

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// Embedded fragments (format 9, issue #32; docs/format.md "v8->v9"). A
// small new fragment rides its table version instead of being an object
// of its own: the version's metadata data.embed.<name> holds its stored
// bytes (plain or zstd, exactly what its object would hold) in standard
// base64, its info (inline or in a chunk) is unchanged, and no object
// R/data/<table>/<name> exists. A one-row commit is then one PUT fewer.
// Later versions that keep the fragment carry its bytes along; a merge of
// trailing fragments (mergeCount) or a compaction folds them into a
// larger fragment, which is an object once it is past the bounds.
const (
	// FormatEmbeddedFragments is the first format stamp whose table
	// versions may embed fragments.
	FormatEmbeddedFragments = 9
	// MaxEmbeddedFragmentBytes bounds the stored bytes of one embedded
	// fragment.
	MaxEmbeddedFragmentBytes = 2048
	// MaxEmbeddedBytes bounds the stored bytes of every fragment one
	// table version embeds, so a version stays O(1) in its table's size.
	MaxEmbeddedBytes = 8192
	// metaEmbedPrefix + fragment name -> base64 of the stored bytes.
	metaEmbedPrefix = "data.embed."
)

// embedOn reports whether this handle embeds small fragments.
func (g *Graph) embedOn() bool {
	return g.embed >= 0 && format.CurrentFormat >= FormatEmbeddedFragments
}

// embedFits reports whether a new fragment of n stored bytes may be
// embedded in a version already embedding total bytes.
func (g *Graph) embedFits(total, n int) bool {
	return g.embedOn() && n <= MaxEmbeddedFragmentBytes && total+n <= MaxEmbeddedBytes
}

// embeddedBytes is the sum of the stored bytes infos embed.
func embeddedBytes(infos []FragmentInfo) int {
	n := 0
	for _, f := range infos {
		n += len(f.embed)
	}
	return n
}

// addEmbeds records in md the bytes of every fragment of infos that is
// embedded (memo: nil or the handle's).
func addEmbeds(md map[string]string, infos []FragmentInfo, memo *codecMemo) {
	for _, f := range infos {
		if f.embed != nil {
			md[metaEmbedPrefix+f.Name] = memo.encodeEmbed(f.embed)
		}
	}
}

// parseEmbeds reads the embedded fragments of a version's metadata, by
// name: every name a ULID, every value strict standard base64 of 1 to
// MaxEmbeddedFragmentBytes bytes, MaxEmbeddedBytes in all. Whether each
// names a fragment of the version is checked once its infos are known
// (attachEmbeds). memo is nil or the handle's (memo.go).
func parseEmbeds(md map[string]string, memo *codecMemo) (map[string][]byte, error) {
	var keys []string
	for k := range md { //detlint:ordered collects keys, sorted below
		if strings.HasPrefix(k, metaEmbedPrefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys) // the first bad embed in key order is the one named
	var out map[string][]byte
	total := 0
	for _, k := range keys {
		v := md[k]
		name := strings.TrimPrefix(k, metaEmbedPrefix)
		if _, err := ulid.ParseStrict(name); err != nil {
			return nil, fmt.Errorf("embedded fragment %q: name is not a ULID", name)
		}
		if base64.StdEncoding.DecodedLen(len(v)) > MaxEmbeddedFragmentBytes+2 {
			return nil, fmt.Errorf("embedded fragment %s: %d base64 bytes, more than %d stored bytes", name, len(v), MaxEmbeddedFragmentBytes)
		}
		b, err := memo.decodeEmbed(v)
		if err != nil || len(b) == 0 || len(b) > MaxEmbeddedFragmentBytes {
			return nil, fmt.Errorf("embedded fragment %s: not 1..%d bytes of standard base64 (%v)", name, MaxEmbeddedFragmentBytes, err)
		}
		if total += len(b); total > MaxEmbeddedBytes {
			return nil, fmt.Errorf("embedded fragments hold more than %d bytes", MaxEmbeddedBytes)
		}
		if out == nil {
			out = map[string][]byte{}
		}
		out[name] = b
	}
	return out, nil
}

// attachEmbeds gives each info of infos its embedded bytes, if any, and
// returns how many it attached.
func attachEmbeds(infos []FragmentInfo, embeds map[string][]byte) int {
	n := 0
	for i := range infos {
		if b, ok := embeds[infos[i].Name]; ok {
			infos[i].embed = b
			n++
		}
	}
	return n
}

// EmbeddedFragments returns the fragments table version tv embeds, by
// name (nil when none), checked as a reader checks them (an error wraps
// format.ErrCorrupt). Consumers outside the data plane (verify, the
// simulator's leak check) read an embedded fragment's bytes from here: it
// has no object.
func EmbeddedFragments(tv kernel.TableVersion) (map[string][]byte, error) {
	md := map[string]string{}
	for _, kv := range tv.Metadata {
		md[kv.Key] = kv.Value
	}
	e, err := parseEmbeds(md, nil)
	if err != nil {
		return nil, fmt.Errorf("table %s version %d: %v: %w", tv.Table, tv.Version, err, format.ErrCorrupt)
	}
	return e, nil
}

// Embedded returns the stored bytes of a fragment its table version
// embeds (nil: the fragment is an object, R/data/<table>/<name>). Infos
// from a data-plane reader or WithEmbedded carry them.
func (f FragmentInfo) Embedded() []byte { return f.embed }

// WithEmbedded returns infos, every fragment info of table version tv in
// order, with the bytes of each fragment tv embeds attached (Embedded),
// after checking them as a reader does: an embed naming no fragment of
// infos, or one past the bounds, is an error wrapping format.ErrCorrupt.
func WithEmbedded(tv kernel.TableVersion, infos []FragmentInfo) ([]FragmentInfo, error) {
	e, err := EmbeddedFragments(tv)
	if err != nil || len(e) == 0 {
		return infos, err
	}
	out := append([]FragmentInfo(nil), infos...)
	if attachEmbeds(out, e) != len(e) {
		return nil, fmt.Errorf("table %s version %d: embeds a fragment it does not list: %w", tv.Table, tv.Version, format.ErrCorrupt)
	}
	return out, nil
}

// WithoutEmbeds returns tv without the bytes of the fragments it embeds
// (its data.embed.* metadata) and how many bytes of metadata that left
// out; every other field, and every other metadata entry in order, is
// tv's. It is the view of a version that marks what it names (a
// collection's): an embedded fragment is no object, so it names nothing
// to keep. tv is not modified.
func WithoutEmbeds(tv format.TableVersion) (format.TableVersion, int) {
	removed := 0
	var kept []format.KV
	for i, kv := range tv.Metadata {
		if !strings.HasPrefix(kv.Key, metaEmbedPrefix) {
			if kept != nil {
				kept = append(kept, kv)
			}
			continue
		}
		if kept == nil {
			kept = append(make([]format.KV, 0, len(tv.Metadata)-1), tv.Metadata[:i]...)
		}
		removed += len(kv.Key) + len(kv.Value)
	}
	if kept != nil {
		tv.Metadata = kept
	}
	return tv, removed
}

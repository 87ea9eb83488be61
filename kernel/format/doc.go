// Package format holds the pure codecs of the graphkernel on-store format:
// the object envelope (magic, format stamp, object kind, writer token,
// payload, checksum), the manifest and table-version payloads, the name rules
// and the key layout. It performs no I/O and reads no clock or entropy.
//
// Every decoder is total: corrupt, truncated or foreign bytes return an error
// matching ErrCorrupt (or ErrUnsupportedFormat for a well-formed object with a
// stamp this build cannot read) and never panic. Every encoding is canonical:
// a successful Decode followed by Encode reproduces the input bytes exactly,
// which the decoders enforce by re-encoding the payload they accepted.
//
// The layout and every field are documented in docs/format.md.
package format

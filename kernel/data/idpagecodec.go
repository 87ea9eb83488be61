package data

import (
	"bytes"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// FormatCompressedIDPages is the first format stamp whose builds write id
// pages (idindex.go) as one zstd frame of the front-coded page under the
// zstd codec (docs/format.md, "Id index"). A build of an older stamp reads
// such a page as corrupt (its magic is not "gkid"), and every such build
// refuses the stamp (format.CheckStamp: TooNew) before it reads any page
// of a branch carrying it. Plain id pages of earlier builds read
// unchanged beside zstd ones; nothing is rewritten (the v6->v7 step of
// the migration registry, kernel/migration.go, with FormatColumnPages).
const FormatCompressedIDPages = 7

// compressIDPage returns the stored bytes of front-coded id page raw:
// one zstd frame of it under the zstd codec in a build writing at least
// FormatCompressedIDPages, when that is smaller and within the reader's
// bounds (compressIPC's rules), else raw. Deterministic: the same page
// and codec always give the same bytes.
func compressIDPage(c Codec, raw []byte) []byte {
	if format.CurrentFormat < FormatCompressedIDPages {
		return raw
	}
	return compressIPC(c, raw)
}

// storedIDPage returns the front-coded id page inside stored bytes b
// (already checked against their size and CRC): b itself when it starts
// with the id page magic, else the content of the one zstd frame b must
// be, bounded before any allocation exactly as a fragment's (storedIPC:
// at most MaxZstdRatio times len(b) and MaxRawFragmentBytes, decoding to
// exactly the declared size). Anything else is an error, which callers
// report as ErrCorruptFragment.
func storedIDPage(b []byte) ([]byte, error) {
	if bytes.HasPrefix(b, []byte(idPageMagic)) {
		return b, nil
	}
	if !bytes.HasPrefix(b, zstdMagic) {
		return nil, fmt.Errorf("not an id page (magic) nor a zstd frame")
	}
	return storedIPC(b)
}

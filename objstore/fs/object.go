package fs

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// On-disk object file format (all integers big-endian):
//
//	offset  size  field
//	0       8     magic "GKFSOBJ1"
//	8       16    write token: 128 random bits from crypto/rand, fresh per Put
//	24      8     data length in bytes
//	32      4     CRC-32C (Castagnoli) of the data
//	36      n     data
//
// The ETag is the write token as 32 lowercase hex digits, so it changes on
// every successful Put, even of identical bytes. Object files are never
// modified in place: a write makes a new file and renames or links it over
// the old name, so a reader holding one open file sees one version's token
// and bytes together.
const (
	objMagic  = "GKFSOBJ1"
	tokenLen  = 16
	headerLen = 8 + tokenLen + 8 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is the parsed fixed-size prefix of an object file.
type header struct {
	token [tokenLen]byte
	size  uint64
	crc   uint32
}

func (h header) etag() string { return hex.EncodeToString(h.token[:]) }

func newToken() ([tokenLen]byte, error) {
	var t [tokenLen]byte
	if _, err := rand.Read(t[:]); err != nil {
		return t, fmt.Errorf("write token: %w", err)
	}
	return t, nil
}

func encodeHeader(token [tokenLen]byte, data []byte) []byte {
	b := make([]byte, headerLen)
	copy(b, objMagic)
	copy(b[8:], token[:])
	binary.BigEndian.PutUint64(b[24:], uint64(len(data)))
	binary.BigEndian.PutUint32(b[32:], crc32.Checksum(data, castagnoli))
	return b
}

func parseHeader(b []byte) (header, error) {
	var h header
	if len(b) != headerLen || !bytes.Equal(b[:8], []byte(objMagic)) {
		return h, fmt.Errorf("%w: bad magic", errCorrupt)
	}
	copy(h.token[:], b[8:24])
	h.size = binary.BigEndian.Uint64(b[24:])
	h.crc = binary.BigEndian.Uint32(b[32:])
	return h, nil
}

// writeTemp writes data as a complete object file under a fresh name in the
// temp directory and returns the temp name, the open file and the object's
// header. The file is not yet durable: the caller fsyncs it (Store.syncRound)
// before any link or rename makes it visible, and closes it.
func writeTemp(tmpDir int, data []byte) (string, *os.File, header, error) {
	tok, err := newToken()
	if err != nil {
		return "", nil, header{}, err
	}
	name := hex.EncodeToString(tok[:]) + ".tmp"
	fd, err := unix.Openat(tmpDir, name,
		unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, filePerm)
	if err != nil {
		return "", nil, header{}, fmt.Errorf("create temp: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	hdr := encodeHeader(tok, data)
	if err := writeAll(f, hdr, data); err != nil {
		f.Close()
		unix.Unlinkat(tmpDir, name, 0) // best effort: an unlinked temp is invisible anyway
		return "", nil, header{}, err
	}
	h, err := parseHeader(hdr)
	if err != nil {
		panic("fs: encodeHeader produced an unparsable header: " + err.Error())
	}
	return name, f, h, nil
}

func writeAll(f *os.File, hdr, data []byte) error {
	if _, err := f.Write(hdr); err != nil {
		return fmt.Errorf("write temp: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write temp: %w", err)
	}
	return nil
}

// openObject opens the object file name inside dir without following a
// symlink and without blocking on a planted FIFO.
func openObject(dir int, name string) (*os.File, error) {
	fd, err := unix.Openat(dir, name, fileFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("open object %q: %w", name, refuseLinks(err))
	}
	return os.NewFile(uintptr(fd), name), nil
}

// readObject reads the header and, with wantData, the data of one open
// object file, checking that it is a regular file, that its length matches
// the header, and (with wantData) the checksum.
func readObject(f *os.File, wantData bool) (header, []byte, error) {
	st, err := f.Stat()
	if err != nil {
		return header{}, nil, fmt.Errorf("stat object: %w", err)
	}
	if !st.Mode().IsRegular() {
		return header{}, nil, fmt.Errorf("%w: object %q is not a regular file", errNotStorable, f.Name())
	}
	if st.Size() < headerLen {
		return header{}, nil, fmt.Errorf("%w: %d bytes, shorter than the header", errCorrupt, st.Size())
	}
	hb := make([]byte, headerLen)
	if _, err := io.ReadFull(f, hb); err != nil {
		return header{}, nil, fmt.Errorf("read header: %w", err)
	}
	h, err := parseHeader(hb)
	if err != nil {
		return header{}, nil, err
	}
	if h.size != uint64(st.Size()-headerLen) {
		return header{}, nil, fmt.Errorf("%w: header says %d data bytes, file holds %d", errCorrupt, h.size, st.Size()-headerLen)
	}
	if !wantData {
		return h, nil, nil
	}
	data := make([]byte, h.size)
	if _, err := io.ReadFull(f, data); err != nil {
		return header{}, nil, fmt.Errorf("read data: %w", err)
	}
	if crc32.Checksum(data, castagnoli) != h.crc {
		return header{}, nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	return h, data, nil
}

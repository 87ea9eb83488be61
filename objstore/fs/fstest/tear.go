// Package fstest holds test helpers that act on an fs store's files
// directly, as a crash or an operator would.
package fstest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TearFileHolding overwrites with zeros the one object file under dir
// whose bytes contain data, as an OS crash leaves a file whose data was
// never synced: the store then reports objstore.ErrCorruptObject for its
// key. It fails tb unless exactly one file holds data.
func TearFileHolding(tb testing.TB, dir string, data []byte) {
	tb.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, data) {
			found = append(found, p)
		}
		return err
	})
	if err != nil || len(found) != 1 {
		tb.Fatalf("object files holding the data: %v, %v; want one", found, err)
	}
	fi, err := os.Stat(found[0])
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(found[0], make([]byte, fi.Size()), 0); err != nil {
		tb.Fatal(err)
	}
}

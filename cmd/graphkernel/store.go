package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/graphkernel/graphkernel/objstore"
	gkfs "github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/s3"
)

// openFS opens an fs store on an existing directory. It refuses a missing
// one rather than create it (fs.Open would), so a typo in a read-only
// command leaves nothing behind; `load --schema` creates it.
func openFS(dir string) (objstore.Store, error) {
	if dir == "" {
		return nil, &usageError{"STORE fs:DIR needs a directory"}
	}
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("store fs:%s: no such directory", dir)
		}
		return nil, fmt.Errorf("store fs:%s: %w", dir, err)
	}
	st, err := gkfs.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("store fs:%s: %w", dir, err)
	}
	return st, nil
}

// openS3 opens an S3 store; configuration (endpoint, region, credentials)
// comes from the standard AWS chain. Errors never carry the endpoint or
// credentials (s3.Open guarantees it).
func openS3(ctx context.Context, spec string) (objstore.Store, error) {
	st, err := s3.Open(ctx, spec, s3.Options{PathStyle: true})
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", spec, err)
	}
	return st, nil
}

// isTerminal reports whether f is a character device (a terminal):
// progress bars are drawn only there.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

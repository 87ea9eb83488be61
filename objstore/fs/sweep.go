package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// SweepTemp removes temp files older than olderThan left in root/.tmp by
// writers that died between writing a temp file and publishing it. Leftover
// temp files are harmless (no operation ever reads or lists them); this
// only reclaims space. Pick olderThan far above the duration of any Put
// (an hour is safe): a Put whose temp file is swept fails with a retryable
// error instead of publishing. It returns how many files it removed.
func (s *Store) SweepTemp(ctx context.Context, olderThan time.Duration) (int, error) {
	root, err := s.openRoot()
	if err != nil {
		return 0, fmt.Errorf("fs: sweep: %w", err)
	}
	defer unix.Close(root)
	fd, err := openDir(root, tmpDirName)
	if err != nil {
		return 0, fmt.Errorf("fs: sweep: %w", err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(s.root, tmpDirName))
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, fmt.Errorf("fs: sweep: %w", err)
	}
	cutoff := time.Now().Add(-olderThan)
	removed := 0
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return removed, fmt.Errorf("fs: sweep: %w", err)
		}
		ok, err := sweepOne(fd, name, cutoff)
		if err != nil {
			return removed, fmt.Errorf("fs: sweep %s: %w", name, err)
		}
		if ok {
			removed++
		}
	}
	return removed, nil
}

// sweepOne removes the temp file name if it was last modified before cutoff.
func sweepOne(dir int, name string, cutoff time.Time) (bool, error) {
	if !strings.HasSuffix(name, ".tmp") {
		return false, nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil // published or swept concurrently
		}
		return false, err
	}
	if time.Unix(st.Mtim.Unix()).After(cutoff) {
		return false, nil
	}
	err := unix.Unlinkat(dir, name, 0)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	return err == nil, err
}

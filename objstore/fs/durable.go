package fs

import (
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// durableDirsLimit bounds the directories a Store remembers as durable
// (durableDirs): a one-row commit's deferred keys cross about 17, and a
// ULID window adds a few every 32.8 seconds, so the limit is reached only
// after hours; past it the oldest entry is forgotten, which costs an
// fsync of its parent the next time a deferred key crosses it, never
// safety.
const durableDirsLimit = 4096

// durableDirs is a Store's cache of the directories it knows durable: a
// directory at a path below the root (encoded names joined by "/") with
// the identity it had when this Store last fsynced its parent, after
// opening it there, while every directory above it was durable too.
// syncDeferred trusts an entry only if the directory it opens at that
// path still has that identity and every directory above it is trusted
// too, so a directory removed and made again (by anyone: this Store's
// prune, another Store, another process) is synced again. It is per
// Store and per process: it only spares fsyncs this Store already made,
// and nothing depends on other processes keeping one. Copies of a Store
// share it. A nil *durableDirs (NoSync) knows nothing.
type durableDirs struct {
	mu    sync.Mutex
	limit int
	ids   map[string]dirID
	// ring holds the paths in the order they entered ids, for eviction
	// (first in, first out); next is the slot the next new path takes. A
	// path dropped and entered again has two slots, so ids never holds
	// more than limit entries.
	ring []string
	next int
	// removals counts the directories this Store removed (prune). A sync
	// that saw it change records nothing: what it opened may be gone.
	removals uint64
}

func newDurableDirs(limit int) *durableDirs {
	return &durableDirs{limit: limit, ids: map[string]dirID{}, ring: make([]string, limit)}
}

// dirID is a directory's identity: device and inode number, birth time,
// and where the file system reports one (FS_IOC_GETVERSION: ext4, tmpfs
// no), the inode's generation. The generation matters: ext4 hands a
// freed inode number to the next mkdir at once and its birth time ticks
// in milliseconds (jiffies), so a directory removed and made again in the
// same tick would otherwise look the same; its generation is new.
type dirID struct {
	devMajor, devMinor uint32
	ino                uint64
	btimeSec           int64
	btimeNsec          uint32
	gen                uint32
}

// fsIocGetVersion is FS_IOC_GETVERSION, _IOR('v', 1, long): FS_IOC_GETFLAGS
// (_IOR('f', 1, long)) with the other type byte, so it is right on every
// architecture golang.org/x/sys knows.
const fsIocGetVersion = unix.FS_IOC_GETFLAGS&^0xff00 | 'v'<<8

// dirIdentity returns the identity of the directory open as fd; ok is
// false if the file system does not report its birth time (then it is
// never trusted: every sync of a key below it fsyncs its parent, as
// before the cache). A test replaces it.
var dirIdentity = func(fd int) (id dirID, ok bool) {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &st); err != nil {
		return dirID{}, false
	}
	if st.Mask&unix.STATX_INO == 0 || st.Mask&unix.STATX_BTIME == 0 {
		return dirID{}, false
	}
	gen, err := unix.IoctlGetUint32(fd, fsIocGetVersion)
	if err != nil {
		gen = 0 // not reported here: device, inode and birth time alone
	}
	return dirID{devMajor: st.Dev_major, devMinor: st.Dev_minor, ino: st.Ino,
		btimeSec: st.Btime.Sec, btimeNsec: st.Btime.Nsec, gen: gen}, true
}

// epoch is the count of removals, read before a sync opens anything.
func (d *durableDirs) epoch() uint64 {
	if d == nil {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.removals
}

// known reports whether the directory at path is known durable with
// identity id (its entry in its parent; the caller checks the parents).
func (d *durableDirs) known(path string, id dirID) bool {
	if d == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	got, ok := d.ids[path]
	return ok && got == id
}

// cached reports whether the directory at path is known durable with
// some identity (openKnownLeaves then opens it to compare).
func (d *durableDirs) cached(path string) bool {
	if d == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.ids[path]
	return ok
}

// record enters the directories of a sync that succeeded, every one of
// them durable by then (its parent fsynced after the sync opened it, or
// already known), unless this Store removed a directory since epoch.
func (d *durableDirs) record(epoch uint64, dirs []*syncNode) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.removals != epoch {
		return
	}
	for _, n := range dirs {
		if !n.idOK {
			continue
		}
		if _, ok := d.ids[n.path]; !ok {
			if old := d.ring[d.next]; old != "" {
				delete(d.ids, old)
			}
			d.ring[d.next] = n.path
			d.next = (d.next + 1) % d.limit
		}
		d.ids[n.path] = n.id
	}
}

// drop forgets the directory at the path names spell, which this Store
// just removed.
func (d *durableDirs) drop(names []string) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.ids, strings.Join(names, "/"))
	d.removals++
}

// size is the number of directories known durable (tests).
func (d *durableDirs) size() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.ids)
}

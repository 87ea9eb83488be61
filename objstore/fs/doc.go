// Package fs is an objstore.Store over a directory on local disk that many
// goroutines and many OS processes can use at once.
//
//	st, err := fs.Open("/var/lib/graphkernel")
//	etag, err := st.Put(ctx, "branches/main", data, objstore.CreateOnly)
//	_, err = st.Put(ctx, "branches/main", next, objstore.IfMatch(etag))
//
// # Layout
//
// A key's segments map to names below the root: every non-final segment is
// a directory "<seg>.d", the final segment a file "<seg>.o", and a segment
// longer than 200 bytes is split at rune boundaries into directories
// "<chunk>.c" followed by its tail. So "a/b" (a.d/b.o) and "a/b/c"
// (a.d/b.d/c.o) coexist, and a 1024-byte key fits NAME_MAX.
//
// The final segment's first bytes (at most 24) are first stored as a
// trie of chunk directories, always leaving a non-empty tail. How the
// trie part is cut is the root's layout, named by an empty marker
// directory in the root:
//
//   - trie3 (root/.layout-trie3, every new root): as trie2, except for a
//     final segment shaped like a ULID (26 characters of Crockford's
//     base32, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", the first at most '7',
//     not all digits): its trie part is its first 7 characters, cut 2, 2,
//     2 and 1, and the other 19 are the object's name:
//     "d/01JGJFGR48VKRYADDJY7NRAJWJ" is d.d/01.c/JG.c/JF.c/G.c/R48VKRYADDJY7NRAJWJ.o.
//     The 7 characters fix a ULID's time above 2^15 ms, so the trie
//     stops before the part unique per write (the rest of the time and
//     the 16 random characters): a fresh ULID-named object lands in its
//     32.8-second window's directory, which the window's first object
//     made, instead of making 8-14 directories of its own (trie2). Every
//     other segment, the kernel's versions among them, maps as in trie2.
//   - trie2 (root/.layout-trie2, roots of the previous version): the
//     first 12 bytes of the trie part are cut into 2-byte chunks as in
//     trie1; from byte 12 on a chunk that starts with an ASCII digit is 1
//     byte, any other 2 bytes (one whole rune where a rune is longer; a
//     2-byte chunk may cross byte 12), so children of one directory may
//     mix widths: "b/18446744073709551615" is
//     b.d/18.c/44.c/67.c/44.c/07.c/37.c/0.c/9.c/5.c/5.c/1.c/6.c/1.c/5.o
//     (6 two-digit and 7 one-digit directories), "b/abcdefghijkl1a2b"
//     b.d/ab.c/.../kl.c/1.c/a2.c/b.o.
//   - trie1 (root/.layout-trie1, roots of earlier versions): every chunk
//     is 2 bytes: b.d/18.c/44.c/67.c/44.c/07.c/37.c/09.c/55.c/16.c/15.o.
//
// Each layout's mapping is a pure, injective function of the key, and List
// orders by the key bytes a path spells, whatever the widths. Keys that
// are prefixes of one another coexist ("ab" is ab.o, "abc" ab.c/c.o).
// This is what keeps history flat: the kernel's versions are fixed-width
// inverted numbers in the final segment, and no directory on the way to
// the newest one holds more than 100 of them, so List(prefix, limit 1)
// reads a bounded number of entries however many versions exist (see
// TestHeadLookupEntriesFlatAcrossDepths). In trie2 and trie3 the 12
// leading digits, which vary only past 10^8 versions, take 6 directories
// and the 8 trailing ones (which vary) hold at most 10 chunks each, so a
// kernel head lookup opens 18 directories (trie1: 14) but reads at most
// 10 entries in every directory that varies up to 10^8 versions (trie1:
// 100 from 100 versions on; see BenchmarkListHeadDepth). Empty trie
// directories a Delete leaves behind are pruned, or skipped by List if a
// race kept them.
//
// Fan-out in trie3 (ULID-named objects; the kernel's fragments, pages,
// sidecars, commit indexes, leases, collection records): the first three
// levels hold at most 32x32 = 1024 chunks each (in practice "01" alone
// for decades, a new chunk of characters 3-4 every 12.4 days, of 5-6
// every 17.5 minutes), the fourth at most 32 (one per 32.8-second
// window of a 17.5-minute one), and a leaf holds the objects of one
// prefix made in one 32.8-second window of their writers' clocks: at r
// objects a second, about 32.8*r. There is no bound independent of the
// write rate (a pure mapping of the name cannot split by arrival): 10^7
// objects written over a day at an even rate (116/s) put about 3,800 in
// a leaf, over an hour (2,800/s) about 91,000, and only 10^7 written
// within one window put them all in one. A List page reads a whole leaf
// (getdents has no order), so a paginated scan of a leaf of n entries in
// pages of p reads about n*n/p entries. A one-row commit on fs makes ~3
// ULID-named objects: at its measured rate (tens a second) a leaf stays
// in the low thousands.
//
// Bookkeeping lives in root/.tmp (temp files), root/.locks (lock files)
// and the layout marker; no key maps there and List never returns them.
// Open reads the marker and keeps using the layout it names (a trie1 or
// trie2 root keeps its layout; nothing migrates). It marks an empty root
// trie3; racing openers agree, since each reads the root's markers back
// after making its own. It refuses a root with two markers
// (ErrMixedLayout: for example an earlier binary marked the same empty
// root trie2 at once), an unknown ".layout-*" marker (ErrUnknownLayout: a
// newer version's; a trie2-era binary refuses a trie3 root this way),
// and a root that holds keys but no marker (ErrLegacyLayout: the flat
// layout of earlier versions, final segment one file name), rather than
// read any of them as if empty. A binary of a version before trie2
// refuses a trie2 or trie3 root holding keys (it sees no trie1 marker)
// but would mark an empty one trie1; do not share a root between
// versions. The layout is the backend's, not the graph's format stamp. An object file is a
// 36-byte header (magic, 128-bit write token, length, CRC-32C) followed by
// the data; see
// object.go. The ETag is the write token in hex.
//
// # Guarantees
//
//   - Atomic create-only: CondCreateOnly publishes with link(2) from a
//     temp file, which fails with EEXIST if the name exists. There is no
//     check-then-write; of N concurrent creators in any processes, exactly
//     one wins and the object holds its bytes.
//   - Compare-and-swap: CondIfMatch reads the current ETag, compares and
//     renames while holding an exclusive flock(2) on the key's lock file
//     (one of 1024 stripes in root/.locks). CondNone and Delete take the
//     same lock, so nothing slips between a CAS's compare and its rename.
//     flock is per open file, so goroutines of one process exclude each
//     other exactly as processes do; a dead process's lock is released by
//     the kernel. Lock waits honor ctx and give up with ErrTransient after
//     30 s.
//   - Fresh ETags: every successful Put stores a new random 128-bit token,
//     so the ETag changes even when the bytes do not (stronger than S3).
//   - Atomic visibility: readers see the old object or the new one, never
//     a mix. Data is written to a temp file and only rename(2) or link(2)
//     makes it visible; object files are never modified in place. Get reads
//     the ETag and the bytes from one open file.
//   - Durability: the temp file is fsynced before it is linked or renamed;
//     after the name is placed its directory and the parent of every
//     directory the walk found missing are fsynced in one round (all at
//     once, so the file system can commit the new directories and the
//     name together: a Put waits for two rounds whatever its depth); the
//     parent directory is fsynced after every delete (DeleteMany unlinks
//     up to 128 keys in up to 32 directories, then fsyncs each directory
//     it changed once, all in one round); all before the call returns.
//     Until then nothing refers to a new directory but the object, which
//     is not yet acknowledged. PutDeferred fsyncs nothing
//     and PutDeferredIntact only its temp file (after a crash its object
//     is absent or whole); SyncDeferred, or PutAfterDeferred in the round
//     of its own temp file and before it places its name, fsyncs such
//     objects, the directories holding them, and the parent of every
//     directory on their paths that the Store does not know durable. A
//     Store knows a directory durable once it fsynced its parent after
//     opening it there, with every directory above it known durable, for
//     as long as the directory it opens at that path has the identity it
//     had then: device, inode number, birth time (statx) and, where the
//     file system reports one (FS_IOC_GETVERSION: ext4), the inode's
//     generation, so a directory removed and made again, by anyone, is
//     synced again. The cache is per Store (copies share it), at most
//     4096 directories (the oldest forgotten first: an fsync more, never
//     less safety), forgets what the Store's own Delete prunes, and holds
//     nothing where the file system reports no birth time (then every
//     directory on the paths and the root are fsynced, every time). So a
//     Store's first sync fsyncs every directory on the paths and the
//     root, and a steady-state commit the leaf directories alone. In
//     the steady state the sync does not walk either: a leaf directory
//     (one holding a key's file) the Store knows durable is opened in
//     one openat2(2) from the root, with the flags a request resolves
//     with (below), and when it has the identity the Store knows it by,
//     it and every directory above it are known durable, none of them
//     opened: each was durable when the Store recorded the leaf (it
//     records a directory only with all above it durable), and none can
//     have been replaced since, as replacing one means removing it,
//     which needs the leaf removed first (a removed leaf cannot come
//     back with its identity), or renaming it, which this store never
//     does (see Not guaranteed). Any miss (the leaf not known, another
//     identity or none, openat2 refused or absent, a symlink or foreign
//     file on the path) walks that leaf's path as above, and the walk
//     gives a refusal its error; what the fast path opens is never
//     entered in the cache. It fsyncs exactly what the walk would.
//     SyncStats counts the fsyncs, rounds and mkdirs. A failed fsync
//     after the name was placed returns an ambiguous ErrTransient.
//     OpenWith(root, Options{NoSync: true}) skips every fsync and keeps
//     every other rule; it exists to build large benchmark fixtures and
//     is not durable across an OS crash.
//   - A failed delete is never reported durable by a retry: when the
//     fsync of the directory after an unlink fails (Delete or
//     DeleteMany: an ambiguous ErrTransient), the Store remembers the key
//     (failedUnlinks, as failed deferred syncs are remembered: at most
//     4,096 keys, oldest forgotten first), and a later Delete or
//     DeleteMany that finds it absent returns a definite ErrTransient with
//     cause objstore.ErrSyncFailed instead of nil, however often it is
//     retried and whatever other fsyncs of the directory succeed in
//     between: Linux reports a writeback error to one fsync and marks
//     the pages clean, so a later fsync that succeeds says nothing about
//     the unlink, and there is nothing for this Store to fsync again to
//     show it. The key is cleared when it is written again (a Put of any
//     kind: it holds a new object, whose own fsyncs speak for it, and a
//     delete of it is a new unlink with a new fsync) or when this Store's
//     delete unlinks a file found there (another Store wrote it) and
//     syncs its directory. A write or delete clears only failures noted
//     before it placed or unlinked its file, so a racing delete's failure
//     about that very file stays. The caller makes such a delete durable
//     by writing the key again and deleting it.
//   - Crash safety: a writer killed at any point leaves the old object or
//     the new one, never a torn one. Its temp file stays in root/.tmp,
//     invisible to Get, Head and List; SweepTemp reclaims it. A CRC-32C over
//     the data catches a file damaged behind the store's back.
//   - Confinement: keys are validated (objstore.ValidateKey) before any
//     I/O, and every path is resolved from the root without following a
//     symlink, so no key reaches outside the root even through a symlink
//     planted inside it. A key's directories are opened in one
//     openat2(2) with RESOLVE_NO_SYMLINKS and RESOLVE_BENEATH (Linux 5.6
//     and later) when all of them exist (Get, Head, Put, List past its
//     held directories, and SyncDeferred's leaf directories known
//     durable; Delete, which prunes, always walks);
//     otherwise (one missing, a symlink or foreign file in the way,
//     openat2 refused or absent) they are walked with openat(2) and
//     O_NOFOLLOW, one component at a time, which makes what is missing
//     and gives every refusal its error. A symlink or foreign file in the
//     way yields ErrInvalidKey; rename/unlink act on the symlink itself,
//     never on its target. (The one-shot open reads only the leaf
//     directory, so a directory above it needs search permission alone
//     where the walk would also need read permission.)
//   - List returns keys in byte-wise key order (not file-name order), is
//     paginated by startAfter/limit, and opens only directories whose key
//     range can match the prefix and startAfter.
//
// # Errors
//
// ENOENT is ErrNotFound; EEXIST on create-only is ErrPreconditionFailed;
// a symlink or foreign file where the mapping expects a directory or an
// object (ELOOP, ENOTDIR, EISDIR) is ErrInvalidKey; a permanent refusal
// (EACCES, EPERM, EROFS, or an object file that fails its header or
// checksum, whether met by Get or by an If-Match Put's compare) is
// ErrRejected; everything else (EIO, ENOSPC, EDQUOT, a cancelled ctx, a
// lock wait that timed out, a symlinked bookkeeping directory, ...) is
// ErrTransient. A full disk is transient on purpose: space can come back
// (SweepTemp, deletes, other writers finishing) within a retry budget.
// The OS error stays the cause, visible to errors.Is/As. A failure after
// the new name is in place is an ambiguous ErrTransient whatever its
// errno, and so is a failed fsync after an unlink; a later delete finding
// that key absent is a definite ErrTransient with cause
// objstore.ErrSyncFailed (Guarantees). Every error is an *objstore.Error carrying Op and Key.
//
// # Not guaranteed
//
//   - NFS and other network filesystems: flock may be local-only or
//     emulated (NFSv3 without lockd, some FUSE filesystems), which breaks
//     CAS across hosts. Use a local filesystem.
//   - Case-insensitive or normalizing filesystems (default macOS APFS)
//     merge keys that differ only in case or Unicode normalization.
//   - Durability relies on the filesystem and the drive honoring fsync;
//     it is not tested against power loss, only against killed processes.
//   - A failed fsync is remembered by the Store that saw it only
//     (failedSyncs, at most 4,096 keys, oldest forgotten first): another
//     process's Store, or this one past the bound, could sync such a key
//     and be told it is durable when its pages never reached the disk
//     (Linux reports a writeback error once). Likewise for a failed
//     delete (failedUnlinks, its own 4,096 keys): another process's
//     Store, this one past the bound, or a new Store after a restart finds
//     the key absent and reports the delete done (nil), and a Delete
//     racing a DeleteMany's unlink of the key returns nil before the
//     batch's fsync, so before a failure of it is known. That writing the
//     key again and deleting it makes the delete durable assumes the file
//     system writes the directory's changed blocks on the next fsync,
//     including the one whose writeback failed when the key's new entry
//     lands in it; a journaling file system (ext4, XFS) usually aborts
//     its journal on such a failure instead, failing every later write. The kernel never syncs
//     another process's deferred objects but for a roll-forward's counter-
//     named table versions (format 7), whose data their writer fsynced
//     before their name.
//   - Concurrent List is not a snapshot: keys written or deleted during a
//     List may or may not appear.
//   - A Put that finds a directory present which another writer made
//     and has not yet fsynced (its parent's entry) does not fsync that
//     parent: its object is durable once that writer's sync is, or by
//     the file system's ordered metadata journal (ext4 and XFS commit the
//     earlier mkdir first), not by this store's own fsyncs.
//   - A directory another process renames away and back (this store
//     never renames a directory) keeps its identity, so a Store that
//     knew it durable keeps trusting an entry the rename replaced; and
//     on a file system that reports no inode generation, a directory
//     another process removes and makes again with the freed inode
//     number in the same birth-time tick is taken for the old one. Its
//     entry is then durable as in the bullet above (the other writer's
//     sync, or the ordered journal), not by this store's fsyncs. The
//     deferred sync's fast path extends that trust from a leaf to the
//     directories above it: if another process renames a directory
//     above a known leaf (or mounts one) and puts another in its place
//     holding the same leaf, a sync that finds the leaf with its old
//     identity fsyncs none of the directories above it, whose entries
//     are then durable only as in the bullet above. A directory the
//     store removes is always empty, so only a rename or a mount moves a
//     leaf under another parent.
//   - Lock files (at most 1024) and empty directories a racing Delete
//     failed to prune are never removed; both are invisible.
//   - Linux only (openat, linkat, flock via golang.org/x/sys/unix;
//     openat2 where the kernel has it).
package fs

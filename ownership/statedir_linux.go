package ownership

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// checkDirFilesystem refuses network and FUSE filesystems (statfs(2) f_type): flock(2) on them is
// either local to one machine (NFS, SMB/CIFS) or up to the FUSE server, so two machines could both
// "own" the same directory.
func checkDirFilesystem(dir string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fmt.Errorf("state directory %s: statfs: %w", dir, err)
	}
	if name := unsafeFilesystem(int64(st.Type)); name != "" {
		return fmt.Errorf("%w: %s is on %s, where file locks are not shared between machines; use a local directory (--home DIR)",
			ErrUnsafeDir, dir, name)
	}
	return nil
}

// unsafeFilesystem names the filesystem for a statfs magic number whose locks cannot be trusted,
// or returns "" (magic numbers from statfs(2) and linux/magic.h).
func unsafeFilesystem(magic int64) string {
	switch uint32(magic) {
	case unix.NFS_SUPER_MAGIC:
		return "NFS"
	case unix.SMB_SUPER_MAGIC, unix.SMB2_SUPER_MAGIC:
		return "SMB"
	case unix.CIFS_SUPER_MAGIC:
		return "CIFS"
	case unix.FUSE_SUPER_MAGIC:
		return "FUSE"
	}
	return ""
}

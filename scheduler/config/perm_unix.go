//go:build !windows

package config

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// maxSymlinks is how many symbolic links resolving routines.toml may follow (Linux's
// MAXSYMLINKS, path_resolution(7)); more is a loop.
const maxSymlinks = 40

// openConfig opens routines.toml for reading, once, and says whether its contents may supply
// commands. It resolves path one component at a time, vetting with guardedEntry every
// directory it looks a name up in (so also those holding symbolic links on the way), then
// opens the resolved file with O_NOFOLLOW and O_NONBLOCK (a FIFO swapped in must not block the
// owner) and vets the open file itself (fstat): a regular file, owned by you or root, not
// writable by group or others. The caller reads from the returned file, so what is vetted is
// what is read: a file renamed into place after the open is never seen. Vetting the
// directories before the open is sound because a directory that passes can only be changed by
// you or root: nobody else can make the path lead elsewhere between the two.
//
// A symbolic link is followed (a routines.toml kept in a dotfiles repository is one): what
// matters is that nobody else can change where it leads, and the vetting covers every
// directory on the way.
//
// It returns the open file and nil, or a *distrust when the path or file lets another user
// change it (the file still opens: its other routines may run). Errors: the lookup or open
// error (fs.ErrNotExist, fs.ErrPermission, ELOOP for more than maxSymlinks links), errIsDir,
// errNotRegular.
func openConfig(path string) (*os.File, *distrust, error) {
	resolved, last, d, err := resolveVetted(path)
	if err != nil {
		return nil, nil, err
	}
	if err := regular(resolved, last); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(resolved, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = regular(resolved, fi)
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	if d == nil {
		d = fileDistrust(resolved, fi)
	}
	return f, d, nil
}

// resolveVetted resolves path (made absolute) to the file it names without any symbolic link,
// and returns that path, the file's Lstat, and the first distrust guardedEntry found on the
// way (nil if none). Errors: as os.Lstat and os.Readlink; ENOTDIR; ELOOP.
func resolveVetted(path string) (resolved string, last os.FileInfo, d *distrust, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, nil, err
	}
	cur := "/"
	dir, err := os.Lstat(cur)
	if err != nil {
		return "", nil, nil, err
	}
	last, links := dir, 0
	todo := strings.Split(abs, "/")
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..": // cur has no symbolic link in it, so its parent is its lexical parent
			cur = filepath.Dir(cur)
			if dir, err = os.Lstat(cur); err != nil {
				return "", nil, nil, err
			}
			last = dir
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", nil, nil, err
		}
		if d == nil {
			d = guardedEntry(cur, dir, next, fi)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if links++; links > maxSymlinks {
				return "", nil, nil, &fs.PathError{Op: "resolve", Path: path, Err: syscall.ELOOP}
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", nil, nil, err
			}
			if filepath.IsAbs(target) {
				cur = "/"
				if dir, err = os.Lstat(cur); err != nil {
					return "", nil, nil, err
				}
			}
			todo = append(strings.Split(target, "/"), todo...)
		case len(todo) > 0 && !fi.IsDir():
			return "", nil, nil, &fs.PathError{Op: "resolve", Path: next, Err: syscall.ENOTDIR}
		default:
			cur, dir, last = next, fi, fi
		}
	}
	return cur, last, d, nil
}

// guardedEntry is the rule for a directory on the way to routines.toml (the OpenSSH
// StrictModes rule, sshd_config(5), with the sticky-bit exception): whoever can rename or
// remove entry in dir can put a file of their choosing there. That is dir's owner, root, and,
// when dir is writable by group or others, those users too, except that in a sticky directory
// (like /tmp, mode 1777) only the entry's owner may rename it. So dir is safe for entry when
// it is owned by you or root and is either writable only by its owner, or sticky with entry
// owned by you or root. di and ei are dir's and entry's Lstat. It returns nil when safe.
func guardedEntry(dir string, di os.FileInfo, entry string, ei os.FileInfo) *distrust {
	if uid, ok := trustedOwner(di); !ok {
		return &distrust{
			why: fmt.Sprintf("%s is owned by %s, who can replace %s", dir, userName(uid), entry),
			fix: "keep routines.toml in a directory of your own",
		}
	}
	mode := di.Mode()
	if mode.Perm()&0o022 == 0 {
		return nil
	}
	if _, mine := trustedOwner(ei); mode&fs.ModeSticky != 0 && mine {
		return nil
	}
	return &distrust{
		why: fmt.Sprintf("%s is writable by other users (mode %s), who can replace %s", dir, octal(mode), entry),
		fix: fmt.Sprintf("chmod go-w %s, or keep routines.toml in a directory only you can write", dir),
	}
}

// fileDistrust vets the open file itself: owned by you or root, not writable by group or
// others. fi is its fstat. It returns nil when the file may supply commands.
func fileDistrust(path string, fi os.FileInfo) *distrust {
	if uid, ok := trustedOwner(fi); !ok {
		return &distrust{
			why: fmt.Sprintf("%s is owned by %s, not you (%s)", path, userName(uid), userName(os.Geteuid())),
			fix: fmt.Sprintf("make it yours: cp %s %s.mine && mv %s.mine %s", path, path, path, path),
		}
	}
	if m := fi.Mode(); m.Perm()&0o022 != 0 {
		return &distrust{
			why: fmt.Sprintf("%s is group- or world-writable (mode %s)", path, octal(m)),
			fix: "chmod go-w " + path,
		}
	}
	return nil
}

// trustedOwner returns fi's owner uid and whether it is the running user or root.
func trustedOwner(fi os.FileInfo) (uid int, ok bool) {
	st, isUnix := fi.Sys().(*syscall.Stat_t)
	if !isUnix {
		return -1, false
	}
	uid = int(st.Uid)
	return uid, uid == os.Geteuid() || uid == 0
}

// userName is "name (uid N)", or "uid N" when the user database has no such uid.
func userName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}

// octal is a file mode as chmod(1) writes it: permission bits, plus 1000 for the sticky bit.
func octal(m fs.FileMode) string {
	n := uint32(m.Perm())
	if m&fs.ModeSticky != 0 {
		n |= 0o1000
	}
	return fmt.Sprintf("%04o", n)
}

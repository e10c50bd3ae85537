#!/usr/bin/env bash
# add-hub.sh TARBALL HUB — the last step of `make package`: puts the hub server program HUB
# (build/routinely-hub) into fyne's Linux tarball TARBALL beside routinely, and makes the
# tarball's Makefile install and uninstall it with routinely, since `routinely hub` looks for
# routinely-hub beside its own executable (app/cli/hub_exec.go). Then checks the tarball as a
# person would use it: `make install` into a scratch DESTDIR puts both programs in bin/, `make
# user-install` into a scratch HOME too, and `make uninstall` removes both.
# Exit status: 0 when the tarball was rewritten and checked; 1 (TARBALL left as it was) otherwise.
set -euo pipefail
tarball=$1 hub=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "add-hub: $*" >&2; exit 1; }

# fyne's tarball is one directory (routinely/) holding the Makefile and usr/.
mkdir "$work/pkg"
tar -xJf "$tarball" -C "$work/pkg"
mk=$(cd "$work/pkg" && find . -maxdepth 2 -name Makefile -type f -print -quit)
[ -n "$mk" ] || fail "$tarball has no Makefile: has fyne package changed its layout?"
top=$(dirname "${mk#./}")
bin=$(cd "$work/pkg/$top" && find usr -path '*/bin/routinely' -type f -print -quit)
[ -n "$bin" ] || fail "$tarball has no usr/.../bin/routinely beside its Makefile: has fyne package changed its layout?"
install -m 0755 "$hub" "$work/pkg/$top/$(dirname "$bin")/routinely-hub"
# Each recipe line that installs or removes bin/$(Exec) gets a twin for routinely-hub.
sed -i -E '/^\t(install|-rm) .*bin\/\$\(Exec\)/{p;s/\$\(Exec\)/routinely-hub/g}' "$work/pkg/$mk"
[ "$(grep -c 'routinely-hub' "$work/pkg/$mk")" -ge 4 ] ||
  fail "the tarball's Makefile has no install/uninstall lines for bin/\$(Exec) to follow: has fyne package changed it?"

# The checks, on a copy, as root or not: DESTDIR and HOME are scratch directories.
cp -a "$work/pkg/$top" "$work/try"
make -s -C "$work/try" install DESTDIR="$work/dest" PREFIX=/usr/local >/dev/null
for p in routinely routinely-hub; do
  [ -x "$work/dest/usr/local/bin/$p" ] || fail "make install did not install bin/$p"
done
make -s -C "$work/try" uninstall DESTDIR="$work/dest" PREFIX=/usr/local >/dev/null 2>&1
for p in routinely routinely-hub; do
  [ ! -e "$work/dest/usr/local/bin/$p" ] || fail "make uninstall left bin/$p"
done
HOME="$work/home" make -s -C "$work/try" user-install >/dev/null
for p in routinely routinely-hub; do
  [ -x "$work/home/.local/bin/$p" ] || fail "make user-install did not install ~/.local/bin/$p"
done

(cd "$work/pkg" && tar -cJf "$work/new.tar.xz" --owner=0 --group=0 -- *)
mv -f "$work/new.tar.xz" "$tarball"
echo "add-hub: $tarball: routinely and routinely-hub in $top/$(dirname "$bin"), installed and removed by its Makefile"

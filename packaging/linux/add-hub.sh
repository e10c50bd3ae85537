#!/usr/bin/env bash
# add-hub.sh IN HUB OUT — the last step of `make package`: writes OUT, fyne's Linux tarball IN
# with the hub server program HUB (build/package/routinely-hub) beside routinely, and with the
# tarball's Makefile installing and uninstalling it with routinely, since `routinely hub` looks
# for routinely-hub beside its own executable (app/cli/hub_exec.go). It first checks the result
# as a person would use it: `make install` into a scratch DESTDIR puts both programs in bin/,
# `make user-install` into a scratch HOME too, and `make uninstall` removes both.
# OUT appears only when all that passed, by a rename of a file written beside it, so it is never
# half written; IN is only read. Exit status: 0 when OUT was written; 1 (no OUT) otherwise.
set -euo pipefail
in=$1 hub=$2 out=$3
[ -d "$(dirname "$out")" ] || { echo "add-hub: no directory for $out" >&2; exit 1; }
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")" # the tar below runs in another directory
work=$(mktemp -d)
new=""
trap 'rm -rf "$work"; [ -z "$new" ] || rm -f "$new"' EXIT
fail() { echo "add-hub: $*" >&2; exit 1; }
rm -f "$out" # a tarball from an earlier run must not look like this run's

# fyne's tarball is one directory (routinely/) holding the Makefile and usr/ (usr/local/ when the
# building machine has /usr/local); fyne-cross puts them at the top.
mkdir "$work/pkg"
tar -xJf "$in" -C "$work/pkg"
mk=$(cd "$work/pkg" && find . -maxdepth 2 -name Makefile -type f -print -quit)
[ -n "$mk" ] || fail "$in has no Makefile: has fyne package changed its layout?"
top=$(dirname "${mk#./}")
bin=$(cd "$work/pkg/$top" && find usr -path '*/bin/routinely' -type f -print -quit)
[ -n "$bin" ] || fail "$in has no usr/.../bin/routinely beside its Makefile: has fyne package changed its layout?"
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

new=$(mktemp "$out.XXXXXX")
(cd "$work/pkg" && tar -cJf "$new" --owner=0 --group=0 -- *)
chmod 0644 "$new"
mv -f "$new" "$out"
new=""
echo "add-hub: $out: routinely and routinely-hub in $top/$(dirname "$bin"), installed and removed by its Makefile"

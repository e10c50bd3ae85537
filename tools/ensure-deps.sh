#!/usr/bin/env bash
# ensure-deps.sh PKG... — install the Debian/Ubuntu packages among PKG that are missing, and do
# nothing when all are present. As root it runs apt-get itself; otherwise through sudo, saying so
# first. On a system without dpkg it only says which packages the build expects (see README,
# Install) and leaves the rest to the build's own errors.
set -euo pipefail
missing=()
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "ensure-deps: not a Debian/Ubuntu system; make sure these (or your system's equivalents) are installed: $*" >&2
  exit 0
fi
for p in "$@"; do
  # ${db:Status-Status} is "installed" only for a fully installed package (dpkg-query(1)).
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}")
if [ "$(id -u)" = 0 ]; then
  echo "ensure-deps: installing ${missing[*]}" >&2
  apt-get update -qq
  "${cmd[@]}"
elif command -v sudo >/dev/null 2>&1; then
  echo "ensure-deps: installing ${missing[*]} with sudo (you may be asked for your password)" >&2
  sudo apt-get update -qq
  sudo "${cmd[@]}"
else
  echo "ensure-deps: missing ${missing[*]}; install them as root: apt-get install ${missing[*]}" >&2
  exit 1
fi

#!/bin/sh
# Post-step for `fyne package -os darwin`: mark Routinely.app as an agent app (LSUIElement =
# true in Contents/Info.plist), so the tray-only app has no Dock icon and no app menu.
# Runs on macOS (plutil ships with the OS). Run it BEFORE signing and notarising: editing
# Info.plist invalidates a signature, so a bundle already signed is re-signed ad hoc here.
#
#   fyne package -os darwin -release && packaging/macos/set-lsuielement.sh Routinely.app
set -eu

if [ "$#" -ne 1 ]; then
	echo "usage: $0 path/to/Routinely.app" >&2
	exit 2
fi
app=$1
plist="$app/Contents/Info.plist"
if [ ! -f "$plist" ]; then
	echo "$0: $plist not found (is $app an app bundle?)" >&2
	exit 1
fi

# -replace adds the key or overwrites it, and keeps the plist's format.
plutil -replace LSUIElement -bool YES "$plist"
plutil -lint "$plist" >/dev/null

if [ -d "$app/Contents/_CodeSignature" ]; then
	codesign --force --sign - "$app"
	echo "$app: re-signed ad hoc after editing Info.plist; sign for release after this step." >&2
fi
echo "$app: LSUIElement set"

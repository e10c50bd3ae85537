#!/usr/bin/env bash
# exec.sh PROGRAM.exe ARGS... — `go test -exec` hook of `make test-windows`: runs the Windows test
# binary that go test built under Wine, in the package directory go test chose, so go test prints
# its own result line ("ok  pkg 1.2s" / "FAIL pkg") as for a native run. test-windows.sh sets
# WINE and the WINE* variables; run through it, not alone.
set -euo pipefail
: "${WINE:?exec.sh is run by tools/wine/test-windows.sh (make test-windows)}"
exec "$WINE" "$@"

//go:build !linux

package ownership

import "errors"

// startTicks is Linux-only; elsewhere create times (gopsutil) are compared with a tolerance.
func startTicks(int) (uint64, error) { return 0, errors.ErrUnsupported }

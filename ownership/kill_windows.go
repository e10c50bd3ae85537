package ownership

import "os"

// terminate ends pid with TerminateProcess: Windows has no polite signal for a console-less
// process.
func terminate(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.Kill()
}

// kill is terminate on Windows.
func kill(pid int) error { return terminate(pid) }

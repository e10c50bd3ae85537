package autostart

// unsupportedBackend is the login item of an OS we do not support: Current says Unsupported,
// Enable and Disable fail with ErrUnsupported.
type unsupportedBackend struct{}

func (unsupportedBackend) resolve(exe string) (string, error) { return cleanAbs(exe), nil }
func (unsupportedBackend) write(string, []string) error       { return ErrUnsupported }
func (unsupportedBackend) remove() error                      { return ErrUnsupported }
func (unsupportedBackend) read() (Status, error)              { return Status{State: Unsupported}, nil }
func (unsupportedBackend) samePath(a, b string) bool          { return false }

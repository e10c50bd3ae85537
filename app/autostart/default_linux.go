package autostart

// Default is the XDG autostart entry under $XDG_CONFIG_HOME/autostart.
func Default() Manager { return NewXDG("") }

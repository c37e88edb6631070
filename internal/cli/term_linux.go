package cli

import "golang.org/x/sys/unix"

// The termios requests: Linux names them TCGETS and TCSETS, the BSDs TIOCGETA and TIOCSETA.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)

//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package cli

import "golang.org/x/sys/unix"

// isTerminalFd reports whether fd is a terminal.
func isTerminalFd(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	return err == nil
}

// noEcho turns the echo of terminal fd off, and returns what turns it back on; ok is false when
// fd is not a terminal whose echo could be turned off.
func noEcho(fd int) (restore func(), ok bool) {
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, false
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
		return nil, false
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, old) }, true
}

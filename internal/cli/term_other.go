//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package cli

// Where nodmix does not know the terminal's interface, stdin is never a terminal: approvals
// that would prompt are refused as without one, and secrets are read as typed (echoed).
func isTerminalFd(int) bool { return false }

func noEcho(int) (restore func(), ok bool) { return nil, false }

//go:build !unix

package config

// lockDir is a no-op where flock is not available; see lock_unix.go.
func lockDir(string) (unlock func()) { return func() {} }

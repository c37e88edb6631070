//go:build unix

package config

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive flock on dir, waiting for it, and returns its release. Savers of
// one config file hold it from comparing the file to renaming over it, so that two of them
// cannot both find the file unchanged and the second rename drop the first edit. It is best
// effort: where the directory cannot be locked (a file system without flock) the save goes ahead
// as before.
func lockDir(dir string) (unlock func()) {
	d, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	for {
		err = unix.Flock(int(d.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		_ = d.Close()
		return func() {}
	}
	return func() { _ = d.Close() } // closing the descriptor releases the lock
}

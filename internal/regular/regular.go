// Package regular opens the files nodmix reads whole (a config file, a secret file, a catalog)
// only when they are regular files, and never waits on a named pipe's writer to do so.
package regular

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular: the path names a directory, a device, a named pipe or a socket. A symbolic
// link to a regular file is fine.
var ErrNotRegular = errors.New("not a regular file")

// Error is a path that names something other than a regular file, with what it is.
type Error struct {
	Path string
	Mode fs.FileMode // the type bits of the opened file
}

func (e *Error) Error() string {
	return e.Path + ": " + ErrNotRegular.Error() + " (it is " + e.Kind() + ")"
}

// Unwrap makes errors.Is(err, ErrNotRegular) hold.
func (e *Error) Unwrap() error { return ErrNotRegular }

// Kind says what the file is, for an error: "a directory", "a named pipe", "a socket", "a
// device" or "a special file".
func (e *Error) Kind() string {
	switch m := e.Mode; {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// Open opens the regular file at path (following links) for reading, with its FileInfo.
// Anything else is an *Error, found from the opened file's Stat, so that nothing can be swapped
// in between a check and the open. The open does not wait for a named pipe's writer: opening
// one for reading otherwise blocks until a writer comes, which no signal short of SIGKILL ends.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, fi, err := openStat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &Error{Path: path, Mode: fi.Mode().Type()}
	}
	return f, fi, nil
}

// OpenInput opens an input file named on a command line. "-" is stdin. Any other path must be
// a regular file, or a file that someone has opened already, so that reading it waits on nothing
// an open would: the very file stdin is (/dev/stdin, a link to it), read from stdin itself, or a
// descriptor the process was started with, named /dev/fd/N (as a shell's process substitution
// names a pipe). release closes what was opened; it never closes stdin.
func OpenInput(path string, stdin io.Reader) (r io.Reader, release func() error, err error) {
	if path == "-" {
		return stdin, noClose, nil
	}
	f, fi, err := openStat(path)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case fi.Mode().IsRegular():
		return f, f.Close, nil
	case fi.IsDir():
	case isStdin(fi, stdin):
		f.Close()
		return stdin, noClose, nil
	case heldDescriptor(path, fi):
		if err := setBlocking(f); err != nil {
			f.Close()
			return nil, nil, err
		}
		return f, f.Close, nil
	}
	f.Close()
	return nil, nil, &Error{Path: path, Mode: fi.Mode().Type()}
}

func noClose() error { return nil }

// openStat opens path for reading without waiting (see Open), with the opened file's FileInfo.
func openStat(path string) (*os.File, fs.FileInfo, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// isStdin reports whether fi is the file stdin reads, when stdin is a file.
func isStdin(fi fs.FileInfo, stdin io.Reader) bool {
	s, ok := stdin.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return false
	}
	in, err := s.Stat()
	return err == nil && os.SameFile(fi, in)
}

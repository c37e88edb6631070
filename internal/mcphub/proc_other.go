//go:build !unix

package mcphub

import "os/exec"

// ownGroup does nothing here: without Unix process groups only the server itself is ended.
func ownGroup(*exec.Cmd) {}

func killGroup(int) {}

//go:build !unix

package sandbox

func setProcessRlimits() {}

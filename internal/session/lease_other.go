//go:build !unix

package session

// hostID is not known here: leases end by expiry alone.
func hostID() string { return "" }

func processStart(int) string { return "" }

func processGone(int, string) bool { return false }

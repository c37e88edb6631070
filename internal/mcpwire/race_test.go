//go:build race

package mcpwire

// raceEnabled: the race detector makes sync.Pool drop what is put in it at random, and with it
// the standard library's encoder state, so allocation counts are not this package's.
const raceEnabled = true

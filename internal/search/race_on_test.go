//go:build race

package search

// raceEnabled trims the slowest exhaustive checks under the race detector, which
// finds nothing in single-goroutine arithmetic but slows it tenfold.
const raceEnabled = true

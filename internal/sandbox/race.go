//go:build race

package sandbox

// raceEnabled reports a -race build, whose runtime cannot live under an address-space limit and
// whose shadow memory inflates the resident size.
const raceEnabled = true

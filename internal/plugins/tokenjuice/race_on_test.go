//go:build race

package tokenjuice

// raceEnabled: the race detector empties sync.Pool at random, so regexp allocates on every match;
// allocation bounds do not hold under it.
const raceEnabled = true

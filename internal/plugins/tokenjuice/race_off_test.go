//go:build !race

package tokenjuice

const raceEnabled = false

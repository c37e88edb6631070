package mcphub

import "time"

// clock is the hub's time for restarts: when a server may try again, and whether it stayed up
// long enough for its backoff to start over. Tests replace it to drive restarts without waiting;
// connect and call deadlines stay on the real clock, as contexts need.
type clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed, and a function that stops it.
	After(d time.Duration) (<-chan time.Time, func())
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) After(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

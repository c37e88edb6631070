package mcphub

import "time"

// clock is the hub's time for restarts and pings: when a server may try again, whether it stayed
// up long enough for its backoff to start over, when an idle server is pinged and how long its
// answer may take. Tests replace it to drive restarts and pings without waiting; connect and call
// deadlines stay on the real clock, as contexts need.
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

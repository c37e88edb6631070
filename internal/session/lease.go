package session

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// ErrLeased: the session is leased to another holder, whose lease has not expired and whose
// process, as far as this host can tell, still runs.
var ErrLeased = errors.New("session is leased to another turn")

// Holder is who takes a lease: one claim (Token) of one process. The process is named by where
// it runs and when it started as well as by its pid, so that the lease of a process killed
// without a chance to release it (SIGKILL, a crash) is known for dead on its host at once rather
// than when it expires, even once the pid has gone to another process.
type Holder struct {
	// Token is the claim's own: two turns of one process are two holders.
	Token string
	// Host names the machine and the pid namespace the process runs in; "" where that is not
	// known, and then only expiry ends the lease.
	Host string
	PID  int
	// Start is when the process started, as its host tells it; "" where that is not known, and
	// then a live process that was given the pid keeps the lease until it expires.
	Start string
}

// thisHost is hostID, read once: the host, boot and pid namespace of a process do not change
// while it runs, and every turn's claim and every check of a lease asks for them.
var thisHost = sync.OnceValue(hostID)

// thisStart is this process's start, read once: every turn claims its session, and reading
// /proc for it was a file open per turn.
var thisStart = sync.OnceValue(func() string { return processStart(os.Getpid()) })

// startOf is processStart(pid), this process's read once.
func startOf(pid int) string {
	if pid == os.Getpid() {
		return thisStart()
	}
	return processStart(pid)
}

// NewHolder returns the holder of a new claim of the process pid (os.Getpid() for this one).
func NewHolder(pid int) Holder {
	return Holder{Token: rand.Text(), Host: thisHost(), PID: pid, Start: startOf(pid)}
}

// Gone reports whether h is a process of this host that no longer runs. It is false for a holder
// on another host, or one this host cannot tell about: such a lease ends by expiry alone.
func (h Holder) Gone() bool {
	if h.Host == "" || h.PID <= 0 || h.Host != thisHost() {
		return false
	}
	if h.PID == os.Getpid() {
		// This process holds it, unless the one that did had the pid before it.
		return h.Start != "" && h.Start != thisStart()
	}
	return processGone(h.PID, h.Start)
}

// KeepsOut reports whether a lease h took, expiring at expires, keeps out at now the claim
// token: it has not expired and its process is not gone. A claim never keeps itself out (taking
// the lease again renews it).
func (h Holder) KeepsOut(token string, expires, now time.Time) bool {
	return h.Token != token && expires.After(now) && !h.Gone()
}

// CheckLease checks the key and holder token of a store's Lease or Unlease.
func CheckLease(key, token string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if token == "" {
		return errors.New("lease: holder token: must not be empty")
	}
	return nil
}

// checkTTL checks a Lease's ttl.
func checkTTL(ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("lease: ttl: must be positive (got %v)", ttl)
	}
	return nil
}

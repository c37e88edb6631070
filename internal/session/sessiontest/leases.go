package sessiontest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/session"
)

// leaser is a store that leases sessions to turns (the agent's capability, by its method set).
type leaser interface {
	Lease(ctx context.Context, key string, h session.Holder, ttl time.Duration) error
	Unlease(ctx context.Context, key, token string) error
}

// Child starts a process that waits, and returns the holder of a claim it would make and a
// func that kills it and waits for it to end: a holder gone from this host. It skips t where
// there is no such process to start.
func Child(t testing.TB) (session.Holder, func()) {
	t.Helper()
	path, err := exec.LookPath("sleep")
	if err != nil {
		t.Skipf("no sleep command to start: %v", err)
	}
	cmd := exec.Command(path, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	kill := func() {
		if !killed {
			killed = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(kill)
	return session.NewHolder(cmd.Process.Pid), kill
}

// Self returns the holder of a new claim of this process.
func Self() session.Holder { return session.NewHolder(os.Getpid()) }

// runLeases checks the leases of a store that has them.
func runLeases(t *testing.T, open func(t *testing.T) session.Store) {
	ctx := context.Background()
	leases := func(t *testing.T) (session.Store, leaser) {
		s := open(t)
		l, ok := s.(leaser)
		if !ok {
			s.Close()
			t.Skip("the store does not lease sessions")
		}
		return s, l
	}
	const long = time.Hour
	t.Run("one holder at a time", func(t *testing.T) {
		s, l := leases(t)
		defer s.Close()
		a, b := Self(), Self()
		if err := l.Lease(ctx, "k", a, long); err != nil {
			t.Fatal(err)
		}
		if err := l.Lease(ctx, "k", b, long); !errors.Is(err, session.ErrLeased) {
			t.Errorf("a second holder's lease: %v, want ErrLeased", err)
		}
		if err := l.Lease(ctx, "other", b, long); err != nil {
			t.Errorf("another session's lease: %v", err)
		}
		if err := l.Lease(ctx, "k", a, long); err != nil {
			t.Errorf("the holder renewing: %v", err)
		}
		// A lease is no session: nothing is listed, nothing is created.
		if all, err := session.AllSessions(ctx, s); err != nil || len(all) != 0 {
			t.Errorf("sessions after leases: %v, %v", all, err)
		}
	})
	t.Run("release", func(t *testing.T) {
		s, l := leases(t)
		defer s.Close()
		a, b, c := Self(), Self(), Self()
		if err := l.Lease(ctx, "k", a, long); err != nil {
			t.Fatal(err)
		}
		if err := l.Unlease(ctx, "k", b.Token); err != nil {
			t.Fatal(err)
		}
		if err := l.Lease(ctx, "k", c, long); !errors.Is(err, session.ErrLeased) {
			t.Errorf("after another holder's release: %v, want ErrLeased (not its lease to end)", err)
		}
		if err := l.Unlease(ctx, "k", a.Token); err != nil {
			t.Fatal(err)
		}
		if err := l.Lease(ctx, "k", b, long); err != nil {
			t.Fatalf("after the holder's release: %v", err)
		}
		// A late release of the first holder leaves the second's lease.
		if err := l.Unlease(ctx, "k", a.Token); err != nil {
			t.Fatal(err)
		}
		if err := l.Lease(ctx, "k", c, long); !errors.Is(err, session.ErrLeased) {
			t.Errorf("after the first holder's late release: %v, want ErrLeased", err)
		}
	})
	t.Run("expiry and renewal", func(t *testing.T) {
		s, l := leases(t)
		defer s.Close()
		a, b := Self(), Self()
		const short = 50 * time.Millisecond
		if err := l.Lease(ctx, "expires", a, short); err != nil {
			t.Fatal(err)
		}
		if err := l.Lease(ctx, "renewed", a, short); err != nil {
			t.Fatal(err)
		}
		if err := l.Lease(ctx, "renewed", a, long); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * short)
		if err := l.Lease(ctx, "expires", b, long); err != nil {
			t.Errorf("an expired lease: %v, want it taken", err)
		}
		if err := l.Lease(ctx, "renewed", b, long); !errors.Is(err, session.ErrLeased) {
			t.Errorf("a renewed lease past its first expiry: %v, want ErrLeased", err)
		}
		// A holder whose lease was taken after it expired does not get it back by renewing.
		if err := l.Lease(ctx, "expires", a, long); !errors.Is(err, session.ErrLeased) {
			t.Errorf("renewing a lease taken since: %v, want ErrLeased", err)
		}
	})
	t.Run("a gone process's lease is taken at once", func(t *testing.T) {
		s, l := leases(t)
		defer s.Close()
		child, kill := Child(t)
		if err := l.Lease(ctx, "k", child, long); err != nil {
			t.Fatal(err)
		}
		b := Self()
		if err := l.Lease(ctx, "k", b, long); !errors.Is(err, session.ErrLeased) {
			t.Fatalf("while the holder's process runs: %v, want ErrLeased", err)
		}
		kill()
		if !child.Gone() && runtime.GOOS != "linux" {
			t.Skip("this host cannot tell that a process is gone")
		}
		if err := l.Lease(ctx, "k", b, long); err != nil {
			t.Errorf("after the holder's process was killed: %v, want the lease taken", err)
		}
	})
	t.Run("a lease of another host keeps out, one of a reused pid does not", func(t *testing.T) {
		s, l := leases(t)
		defer s.Close()
		self := Self()
		reused := self // the pid of a process that held it, now this one's
		reused.Token, reused.Start = "reused", "1"
		elsewhere := session.Holder{Token: "elsewhere", Host: "another host", PID: 1 << 30, Start: "1"}
		unknown := session.Holder{Token: "unknown", PID: 1 << 30}
		for _, h := range []session.Holder{elsewhere, unknown} {
			if err := l.Lease(ctx, h.Token, h, long); err != nil {
				t.Fatal(err)
			}
			if err := l.Lease(ctx, h.Token, self, long); !errors.Is(err, session.ErrLeased) {
				t.Errorf("lease of %+v: %v, want ErrLeased until it expires", h, err)
			}
		}
		if self.Start == "" {
			return // the host does not tell when a process started
		}
		if err := l.Lease(ctx, "reused", reused, long); err != nil {
			t.Fatal(err)
		}
		if err := l.Lease(ctx, "reused", self, long); err != nil {
			t.Errorf("lease of a process whose pid went to this one: %v, want it taken", err)
		}
	})
	t.Run("removing a session ends its lease", func(t *testing.T) {
		s, l := leases(t)
		defer s.Close()
		if _, err := s.Append(ctx, "k", 0, Transcript()); err != nil {
			t.Fatal(err)
		}
		if err := l.Lease(ctx, "k", Self(), long); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteSession(ctx, "k"); err != nil {
			t.Fatalf("removing a leased session: %v", err)
		}
		if err := l.Lease(ctx, "k", Self(), long); err != nil {
			t.Errorf("after the removal: %v, want the lease free", err)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		s, l := leases(t)
		defer s.Close()
		noToken := Self()
		noToken.Token = ""
		for _, tc := range []struct {
			field string // what the error names
			err   error
		}{
			{"session key", l.Lease(ctx, "", Self(), long)},
			{"token", l.Lease(ctx, "k", noToken, long)},
			{"ttl", l.Lease(ctx, "k", Self(), 0)},
			{"ttl", l.Lease(ctx, "k", Self(), -time.Second)},
			{"session key", l.Unlease(ctx, "a\x00b", "t")},
			{"token", l.Unlease(ctx, "k", "")},
		} {
			if tc.err == nil || !strings.Contains(tc.err.Error(), tc.field) {
				t.Errorf("a bad %s: %v, want an error naming it", tc.field, tc.err)
			}
		}
		if err := l.Lease(ctx, "k", Self(), long); err != nil {
			t.Errorf("after the refused ones: %v, want the lease free", err)
		}
	})
}

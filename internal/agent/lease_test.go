package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
	"github.com/nodmix/nodmix/internal/session/sqlite"
)

// unleased is a store without leases: only the Append check keeps its turns apart.
type unleased struct{ *session.Memory }

func (unleased) Lease() {} // hides Memory's: not the leaser method set

// blocked is a model whose first step waits for release (or the turn's end) before answering.
func blocked(release <-chan struct{}, text string) *script {
	return &script{steps: []func(*llm.Request) (*llm.Message, error){func(req *llm.Request) (*llm.Message, error) {
		<-release
		return answer(text)(req)
	}}}
}

// waitFor polls until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A second turn on a session while one runs: with a store that leases sessions it is refused at
// once, before it stores its input or calls its model, and the first keeps its answer; with a
// store that does not, the first finds the transcript changed at its next write.
func TestSecondTurnWhileOneRuns(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sessions   func(*session.Memory) agent.Sessions
		secondErr  error // nil: it runs
		firstErr   error
		transcript []string // texts kept
	}{
		{"leasing store", func(m *session.Memory) agent.Sessions { return m }, agent.ErrBusy, nil, []string{"one", "first"}},
		{"store without leases", func(m *session.Memory) agent.Sessions { return unleased{m} }, nil, agent.ErrBusy, []string{"one", "two", "second"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := session.NewMemory()
			r := &agent.Runner{Sessions: tc.sessions(st), Tools: &tools{}}
			release := make(chan struct{})
			errc := make(chan error, 1)
			go func() {
				_, err := r.Run(ctx, agent.Turn{Session: "s", Model: blocked(release, "first"), Input: []llm.Message{user("one")}})
				errc <- err
			}()
			waitFor(t, "the first turn's input", func() bool { tr, _ := st.Transcript(ctx, "s"); return len(tr) == 1 })
			other := &script{steps: []func(*llm.Request) (*llm.Message, error){answer("second")}}
			_, err := r.Run(ctx, agent.Turn{Session: "s", Model: other, Input: []llm.Message{user("two")}})
			if !errors.Is(err, tc.secondErr) || (err != nil) != (tc.secondErr != nil) {
				t.Errorf("second turn: %v, want %v", err, tc.secondErr)
			}
			if tc.secondErr != nil && len(other.reqs) != 0 {
				t.Errorf("the refused turn called its model %d times", len(other.reqs))
			}
			close(release)
			if err := <-errc; !errors.Is(err, tc.firstErr) || (err != nil) != (tc.firstErr != nil) {
				t.Errorf("first turn: %v, want %v", err, tc.firstErr)
			}
			tr, err := st.Transcript(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, m := range tr {
				texts = append(texts, m.Text())
			}
			if diff := cmp.Diff(tc.transcript, texts); diff != "" {
				t.Errorf("transcript (-want +got):\n%s", diff)
			}
		})
	}
}

// A session another process leases (a gateway's turn on the same state.db) refuses the turn
// with ErrBusy, which faces map to "session busy", before anything is stored or sent; once that
// process is gone, the next turn runs.
func TestTurnOnASessionAnotherProcessLeases(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	child, kill := sessiontest.Child(t)
	if err := st.Lease(ctx, "s", child, time.Hour); err != nil {
		t.Fatal(err)
	}
	r := &agent.Runner{Sessions: st, Tools: &tools{}}
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){answer("hi")}}
	_, err = r.Run(ctx, agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("hello")}})
	if !errors.Is(err, agent.ErrBusy) || err.Error() != `session "s": the session is busy with another turn` {
		t.Errorf("turn on a leased session: %v, want ErrBusy", err)
	}
	if len(m.reqs) != 0 {
		t.Errorf("the refused turn called its model %d times", len(m.reqs))
	}
	if _, err := st.Transcript(ctx, "s"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the refused turn stored something: %v", err)
	}
	kill()
	if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("hello")}}); err != nil {
		t.Errorf("turn after the holder's process was killed: %v", err)
	}
}

// countLeases counts the leases taken through it.
type countLeases struct {
	*session.Memory
	n atomic.Int32
}

func (c *countLeases) Lease(ctx context.Context, key string, h session.Holder, ttl time.Duration) error {
	c.n.Add(1)
	return c.Memory.Lease(ctx, key, h, ttl)
}

// A turn longer than its lease's TTL renews it and keeps the session; the renewing stops when
// the turn ends.
func TestLongTurnKeepsItsLease(t *testing.T) {
	ctx := context.Background()
	st := &countLeases{Memory: session.NewMemory()}
	const ttl = 300 * time.Millisecond
	r := &agent.Runner{Sessions: st, Tools: &tools{}, LeaseTTL: ttl}
	release := make(chan struct{})
	errc := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := r.Run(ctx, agent.Turn{Session: "s", Model: blocked(release, "done"), Input: []llm.Message{user("one")}})
		errc <- err
	}()
	// Past the TTL, by renewals: the first lease and four renewals, a third of the TTL apart.
	waitFor(t, "the lease renewed", func() bool { return st.n.Load() >= 5 && time.Since(start) > ttl })
	if err := st.Memory.Lease(ctx, "s", sessiontest.Self(), time.Hour); !errors.Is(err, session.ErrLeased) {
		t.Errorf("another holder past the TTL: %v, want ErrLeased", err)
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	n := st.n.Load()
	time.Sleep(ttl)
	if after := st.n.Load(); after != n {
		t.Errorf("%d leases taken after the turn ended", after-n)
	}
}

// Every way a turn ends lets its session go.
func TestTurnReleasesItsLease(t *testing.T) {
	for _, tc := range []struct {
		name string
		step func(cancel func()) func(*llm.Request) (*llm.Message, error)
	}{
		{"answer", func(func()) func(*llm.Request) (*llm.Message, error) { return answer("ok") }},
		{"model error", func(func()) func(*llm.Request) (*llm.Message, error) {
			return func(*llm.Request) (*llm.Message, error) { return nil, errors.New("provider down") }
		}},
		{"cancelled", func(cancel func()) func(*llm.Request) (*llm.Message, error) {
			return func(*llm.Request) (*llm.Message, error) { cancel(); return nil, context.Canceled }
		}},
		{"model panics", func(func()) func(*llm.Request) (*llm.Message, error) {
			return func(*llm.Request) (*llm.Message, error) { panic("broken model") }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := session.NewMemory()
			r := &agent.Runner{Sessions: st, Tools: &tools{}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			m := &script{steps: []func(*llm.Request) (*llm.Message, error){tc.step(cancel)}}
			func() {
				defer func() { _ = recover() }()
				_, _ = r.Run(ctx, agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("hello")}})
			}()
			if err := st.Lease(context.Background(), "s", sessiontest.Self(), time.Hour); err != nil {
				t.Errorf("after the turn: %v, want the session free", err)
			}
		})
	}
}

// A lease TTL too short to renew a third of the way through still runs the turn.
func TestTinyLeaseTTL(t *testing.T) {
	r := &agent.Runner{Sessions: session.NewMemory(), Tools: &tools{}, LeaseTTL: 2}
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){answer("ok")}}
	if _, err := r.Run(context.Background(), agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("hello")}}); err != nil {
		t.Fatal(err)
	}
}

package app

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/policy"
)

type namedAsker string

func (n namedAsker) Ask(context.Context, policy.ApprovalRequest) (policy.Decision, error) {
	return policy.Decision{Approve: true, Reason: string(n)}, nil
}

// Removing a session's old asker leaves the one that replaced it in place.
func TestAskerRemovalKeepsNewerRegistration(t *testing.T) {
	var r askerRouter
	r.setDefault(namedAsker("terminal"))
	removeOld := r.set("s1", namedAsker("old client"))
	removeNew := r.set("s1", namedAsker("new client"))
	ask := func() string {
		d, err := r.Ask(context.Background(), policy.ApprovalRequest{Session: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		return d.Reason
	}
	var got []string
	removeOld()
	got = append(got, ask())
	removeNew()
	got = append(got, ask())
	if diff := cmp.Diff([]string{"new client", "terminal"}, got); diff != "" {
		t.Errorf("askers (-want +got):\n%s", diff)
	}
}

// A face's first turn builds the providers (and registers their clean-up) on a request's
// goroutine while another may be shutting the app down.
func TestProvidersWhileClosing(t *testing.T) {
	a, err := New(context.Background(), Options{Getenv: testEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = a.Providers()
	}()
	if err := a.Close(); err != nil {
		t.Error(err)
	}
	<-done
	if err := a.Close(); err != nil {
		t.Error(err)
	}
}

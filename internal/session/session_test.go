package session_test

import (
	"testing"

	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
)

func TestMemory(t *testing.T) {
	sessiontest.Run(t, func(*testing.T) session.Store { return session.NewMemory() }, nil)
}

func BenchmarkMemory(b *testing.B) {
	sessiontest.Bench(b, func(*testing.B) session.Store { return session.NewMemory() })
}

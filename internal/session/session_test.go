package session_test

import (
	"errors"
	"strings"
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

func TestCheckKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"chat", true},
		{"user@example.com/thread 7", true},
		{"ünïcødé ключ", true},
		{strings.Repeat("k", session.MaxKeyLen), true},
		{"", false},
		{strings.Repeat("k", session.MaxKeyLen+1), false},
		{"a\x00b", false},
		{"line\r\nX-Injected: 1", false},
		{"tab\there", false},
		{"del\x7f", false},
		{"bytes\xff\xfe", false}, // not UTF-8: JSON would carry it as U+FFFD
		{"csi\u009b2J", false},   // a C1 control: terminals read U+009B as the start of an escape
		{"nel\u0085line", false}, // a C1 line break
		{"nbsp\u00a0ok", true},
	} {
		err := session.CheckKey(tc.key)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, session.ErrInvalidKey) {
			t.Errorf("CheckKey(%q) = %v, want ok %v", tc.key, err, tc.ok)
		}
	}
}

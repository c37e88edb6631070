package session

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCursorRoundTrip(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 123456000, time.UTC)
	for _, c := range []Cursor{
		{},
		{Updated: at, Key: "k"},
		{Updated: at, Key: "user:42/chat 7?&=#"},
		{Updated: time.UnixMicro(0).UTC(), Key: strings.Repeat("é", MaxKeyLen/2)},
	} {
		s := c.String()
		if strings.ContainsAny(s, "+/=?&#% ") {
			t.Errorf("token %q of %+v needs escaping in a URL", s, c)
		}
		got, err := ParseCursor(s)
		if err != nil {
			t.Fatalf("ParseCursor(%q): %v", s, err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

func TestParseCursorRefusesWhatNoPageReturned(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	for name, s := range map[string]string{
		"not base64":       "!!!",
		"padded":           enc([]byte{1, 2, 'k'}) + "==",
		"a session key":    "s001",
		"no key":           enc([]byte{1, 2}),
		"another version":  enc([]byte{2, 2, 'k'}),
		"negative time":    enc([]byte{1, 1, 'k'}),
		"a control in key": enc([]byte{1, 2, 'k', 0}),
		"one byte":         enc([]byte{1}),
	} {
		if _, err := ParseCursor(s); !errors.Is(err, ErrInvalidCursor) {
			t.Errorf("%s %q: %v, want ErrInvalidCursor", name, s, err)
		}
	}
}

// Among sessions of one microsecond the key orders them, as in Sessions.
func TestCursorBeforeBreaksTiesByKey(t *testing.T) {
	at := time.UnixMicro(1000).UTC()
	c := Cursor{Updated: at, Key: "b"}
	for _, tc := range []struct {
		in   Info
		want bool
	}{
		{Info{Key: "z", Updated: at.Add(time.Microsecond)}, true},
		{Info{Key: "a", Updated: at}, true},
		{Info{Key: "b", Updated: at}, true},
		{Info{Key: "c", Updated: at}, false},
		{Info{Key: "a", Updated: at.Add(-time.Microsecond)}, false},
	} {
		if got := c.Before(&tc.in); got != tc.want {
			t.Errorf("Before(%s at %d) = %v, want %v", tc.in.Key, tc.in.Updated.UnixMicro(), got, tc.want)
		}
	}
	if (Cursor{}).Before(&Info{Key: "a", Updated: at}) {
		t.Error("the start cursor is after a session")
	}
}

// FuzzParseCursor: any after= a client sends is refused or read as a cursor whose own token reads
// back as the same cursor, with a key the store would accept.
func FuzzParseCursor(f *testing.F) {
	f.Add("")
	f.Add(Cursor{Updated: time.Date(2026, 5, 1, 12, 0, 0, 123456000, time.UTC), Key: "k"}.String())
	f.Add("AQ")
	f.Add("not base64!")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCursor(s)
		if err != nil || c.IsZero() {
			return
		}
		if err := CheckKey(c.Key); err != nil {
			t.Fatalf("ParseCursor(%q) gave key %q: %v", s, c.Key, err)
		}
		again, err := ParseCursor(c.String())
		if err != nil {
			t.Fatalf("the token of %+v does not parse: %v", c, err)
		}
		if diff := cmp.Diff(c, again); diff != "" {
			t.Fatalf("round trip of %q (-first +again):\n%s", s, diff)
		}
	})
}

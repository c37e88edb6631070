package session

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Listing pages. Sessions are listed most recently updated first, ties broken by key; a page
// ends with a Cursor, the place of its last session in that order, and the next page holds the
// sessions after it. A write stamps its session after every time the store recorded (Stamp),
// so an updated session moves before every cursor handed out: a walk of the pages returns no
// session twice and ends, and it returns every session that is neither updated nor removed
// while it runs. One updated during the walk is met again in the next walk, at the front.
const (
	DefaultPage = 100  // sessions on a page when the client does not say
	MaxPage     = 1000 // the most on one page
)

// Cursor is a place in the listing order: after the session Key last updated at Updated. The
// zero Cursor is the start of the listing.
type Cursor struct {
	Updated time.Time
	Key     string
}

// ErrInvalidCursor: a cursor token that no page returned.
var ErrInvalidCursor = errors.New("must be the next cursor of a previous page")

// ErrInvalidLimit: a page size outside 1..MaxPage.
var ErrInvalidLimit = fmt.Errorf("must be an integer from 1 to %d", MaxPage)

// CursorOf is the place of in in the listing order.
func CursorOf(in *Info) Cursor { return Cursor{Updated: in.Updated, Key: in.Key} }

// IsZero reports whether c is the start of the listing.
func (c Cursor) IsZero() bool { return c.Key == "" }

// Before reports whether in is at c or before it in the listing order: not on the pages after c.
func (c Cursor) Before(in *Info) bool {
	if c.IsZero() {
		return false
	}
	if d := in.Updated.Compare(c.Updated); d != 0 {
		return d > 0
	}
	return cmp.Compare(in.Key, c.Key) <= 0
}

// cursorVersion leads every token, so that a later layout can tell its tokens from these.
const cursorVersion = 1

// String is the cursor as a client passes it back: opaque, URL-safe, "" for the start. It holds
// the microseconds of Updated and the key, so a client must not read meaning into it.
func (c Cursor) String() string {
	if c.IsZero() {
		return ""
	}
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(c.Key))
	b = append(b, cursorVersion)
	b = binary.AppendVarint(b, c.Updated.UnixMicro())
	b = append(b, c.Key...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseCursor reads a String; "" is the start. Anything else no String returns wraps
// ErrInvalidCursor.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 2 || b[0] != cursorVersion {
		return Cursor{}, ErrInvalidCursor
	}
	us, n := binary.Varint(b[1:])
	if n <= 0 || us < 0 {
		return Cursor{}, ErrInvalidCursor
	}
	key := string(b[1+n:])
	if CheckKey(key) != nil {
		return Cursor{}, ErrInvalidCursor
	}
	return Cursor{Updated: time.UnixMicro(us).UTC(), Key: key}, nil
}

// CheckLimit returns an error wrapping ErrInvalidLimit unless limit is a page size.
func CheckLimit(limit int) error {
	if limit < 1 || limit > MaxPage {
		return fmt.Errorf("limit: %w (got %d)", ErrInvalidLimit, limit)
	}
	return nil
}

// Pager is the listing part of a Store.
type Pager interface {
	SessionsPage(ctx context.Context, after Cursor, limit int) ([]Info, Cursor, error)
}

// AllSessions lists every session of s in the listing order, a page of MaxPage at a time; what
// a walk of the pages guarantees while sessions change holds for it too.
func AllSessions(ctx context.Context, s Pager) ([]Info, error) {
	all := []Info{}
	var after Cursor
	for {
		page, next, err := s.SessionsPage(ctx, after, MaxPage)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next.IsZero() {
			return all, nil
		}
		after = next
	}
}

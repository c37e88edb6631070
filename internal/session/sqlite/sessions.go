package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
)

// infoCols are what scanInfo reads, in its order.
const infoCols = `session, model, agent, overrides, counters, length, created, updated`

type scanner interface{ Scan(dest ...any) error }

func scanInfo(r scanner) (*session.Info, error) {
	var in session.Info
	var overrides, counters string
	var created, updated int64
	if err := r.Scan(&in.Key, &in.Model, &in.Agent, &overrides, &counters, &in.Messages, &created, &updated); err != nil {
		return nil, err
	}
	if err := decodeMap(overrides, &in.Overrides); err != nil {
		return nil, fmt.Errorf("overrides: %w", err)
	}
	if err := decodeMap(counters, &in.Counters); err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	in.Created = time.UnixMicro(created).UTC()
	in.Updated = time.UnixMicro(updated).UTC()
	return &in, nil
}

func decodeMap[V any](s string, m *map[string]V) error {
	if s == "" || s == "{}" {
		return nil
	}
	if err := json.Unmarshal([]byte(s), m); err != nil {
		return err
	}
	if len(*m) == 0 {
		*m = nil
	}
	return nil
}

func encodeMap[V any](m map[string]V) (string, error) {
	if len(m) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// Session implements session.Store.
func (s *Store) Session(ctx context.Context, key string) (*session.Info, error) {
	if err := session.CheckKey(key); err != nil {
		return nil, err
	}
	in, err := scanInfo(s.st.infoLive.QueryRowContext(ctx, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, session.ErrNotFound
	}
	if err != nil {
		return nil, s.fail("session", err)
	}
	return in, nil
}

// The listing's queries read sessions_recent, in its order, from the cursor on: a page costs
// its own rows, not a read and a sort of every session (a gateway keeping 100,000 of them read
// them all for every sidebar). The cursor's key matters only among rows of its very microsecond,
// which Stamp makes rare; those are skipped by the filter.
const (
	sessionsRecentIndex = `CREATE INDEX IF NOT EXISTS sessions_recent ON sessions(updated DESC, session) WHERE created IS NOT NULL`
	sessionsFirstPage   = `SELECT ` + infoCols + ` FROM sessions WHERE created IS NOT NULL
		ORDER BY updated DESC, session LIMIT ?`
	sessionsNextPage = `SELECT ` + infoCols + ` FROM sessions WHERE created IS NOT NULL
		AND updated <= ? AND (updated < ? OR session > ?)
		ORDER BY updated DESC, session LIMIT ?`
)

// SessionsPage implements session.Store in one query, which reads one row past the page to
// tell whether another follows.
func (s *Store) SessionsPage(ctx context.Context, after session.Cursor, limit int) ([]session.Info, session.Cursor, error) {
	if err := session.CheckLimit(limit); err != nil {
		return nil, session.Cursor{}, err
	}
	var rows *sql.Rows
	var err error
	if after.IsZero() {
		rows, err = s.db.QueryContext(ctx, sessionsFirstPage, limit+1)
	} else {
		us := after.Updated.UnixMicro()
		rows, err = s.db.QueryContext(ctx, sessionsNextPage, us, us, after.Key, limit+1)
	}
	if err != nil {
		return nil, session.Cursor{}, s.fail("sessions", err)
	}
	defer rows.Close()
	page := make([]session.Info, 0, min(limit+1, 128))
	for rows.Next() {
		in, err := scanInfo(rows)
		if err != nil {
			return nil, session.Cursor{}, s.fail("sessions", err)
		}
		page = append(page, *in)
	}
	if err := rows.Err(); err != nil {
		return nil, session.Cursor{}, s.fail("sessions", err)
	}
	var next session.Cursor
	if len(page) > limit {
		page = page[:limit]
		next = session.CursorOf(&page[limit-1])
	}
	return page, next, nil
}

// Transcript implements session.Store in one read transaction, so the length and the messages
// agree.
func (s *Store) Transcript(ctx context.Context, key string) (msgs []llm.Message, err error) {
	if err := session.CheckKey(key); err != nil {
		return nil, err
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.fail("transcript", err)
	}
	defer tx.Rollback() //nolint:errcheck // read only: nothing to keep
	var n int
	err = tx.StmtContext(ctx, s.st.length).QueryRowContext(ctx, key).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, session.ErrNotFound
	}
	if err != nil {
		return nil, s.fail("transcript", err)
	}
	if n == 0 {
		return nil, nil
	}
	rows, err := tx.StmtContext(ctx, s.st.messages).QueryContext(ctx, key)
	if err != nil {
		return nil, s.fail("transcript", err)
	}
	defer rows.Close()
	// The row's length sizes the slice only up to a bound: a damaged file may hold any number.
	msgs = make([]llm.Message, 0, min(n, 1<<16))
	for rows.Next() {
		var seq int64
		var role string
		var parts sql.RawBytes // decoded before the next row, so never copied
		if err := rows.Scan(&seq, &role, &parts); err != nil {
			return nil, s.fail("transcript", err)
		}
		// Appends write the rows and the length in one transaction, so only damage parts them.
		// A transcript with a message missing would be sent as it is (a tool call without its
		// result, which providers refuse) and every later Append would conflict on the length.
		if seq != int64(len(msgs)) {
			return nil, s.fail("transcript", fmt.Errorf("%w: message %d is missing", errDamaged, len(msgs)))
		}
		ps, err := session.DecodeParts(parts)
		if err != nil {
			return nil, s.fail(fmt.Sprintf("transcript: message %d", len(msgs)), err)
		}
		msgs = append(msgs, llm.Message{Role: llm.Role(role), Parts: ps})
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("transcript", err)
	}
	if len(msgs) != n {
		return nil, s.fail("transcript", fmt.Errorf("%w: the session counts %d messages, the file holds %d", errDamaged, n, len(msgs)))
	}
	return msgs, nil
}

// errDamaged: the file holds what no write of the store leaves.
var errDamaged = errors.New("the file is damaged")

// Append implements session.Store: the length check and the writes are one transaction, which
// holds the write lock from its start, so two appends at one base cannot both pass the check.
func (s *Store) Append(ctx context.Context, key string, base int, msgs []llm.Message) (out *session.Info, err error) {
	if err := session.CheckKey(key); err != nil {
		return nil, err
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		var n int
		var created sql.NullInt64
		err := tx.StmtContext(ctx, s.st.head).QueryRowContext(ctx, key).Scan(&n, &created)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if n != base {
			return session.ConflictError(created.Valid)
		}
		if created.Valid && len(msgs) == 0 {
			out, err = scanInfo(tx.StmtContext(ctx, s.st.info).QueryRowContext(ctx, key))
			return err
		}
		if len(msgs) > 0 {
			ins := tx.StmtContext(ctx, s.st.insertMessage)
			var buf []byte
			for i := range msgs {
				buf = session.EncodeParts(buf[:0], msgs[i].Parts)
				if _, err := ins.ExecContext(ctx, key, base+i, string(msgs[i].Role), string(buf)); err != nil {
					return err
				}
			}
		}
		stamp, err := s.stamp(ctx, tx)
		if err != nil {
			return err
		}
		out, err = scanInfo(tx.StmtContext(ctx, s.st.appendSession).QueryRowContext(ctx, key, base+len(msgs), stamp, stamp))
		return err
	})
	if errors.Is(err, session.ErrConflict) {
		return nil, err
	}
	if err != nil {
		return nil, s.fail("append", err)
	}
	return out, nil
}

// Update implements session.Store. fn runs inside the transaction, which holds the write lock,
// so it runs once.
func (s *Store) Update(ctx context.Context, key string, fn func(*session.Info) error) (out *session.Info, err error) {
	if err := session.CheckKey(key); err != nil {
		return nil, err
	}
	var fnErr error
	err = s.write(ctx, func(tx *sql.Tx) error {
		in, err := scanInfo(tx.StmtContext(ctx, s.st.infoLive).QueryRowContext(ctx, key))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			in = &session.Info{Key: key}
		case err != nil:
			return err
		}
		if in.Overrides == nil {
			in.Overrides = map[string]string{}
		}
		if in.Counters == nil {
			in.Counters = map[string]int64{}
		}
		if fnErr = fn(in); fnErr != nil {
			return fnErr
		}
		overrides, err := encodeMap(in.Overrides)
		if err != nil {
			return s.fail("overrides", err)
		}
		counters, err := encodeMap(in.Counters)
		if err != nil {
			return s.fail("counters", err)
		}
		stamp, err := s.stamp(ctx, tx)
		if err != nil {
			return err
		}
		out, err = scanInfo(tx.StmtContext(ctx, s.st.updateSession).QueryRowContext(ctx, key, in.Model, in.Agent, overrides, counters, stamp, stamp))
		return err
	})
	if fnErr != nil {
		return nil, fnErr
	}
	if err != nil {
		return nil, s.fail("update", err)
	}
	return out, nil
}

// DeleteSession implements session.Store.
func (s *Store) DeleteSession(ctx context.Context, key string) error {
	if err := session.CheckKey(key); err != nil {
		return err
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE session = ? AND created IS NOT NULL`, key)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return session.ErrNotFound
		}
		for _, q := range []string{
			`DELETE FROM messages WHERE session = ?`,
			`DELETE FROM selections WHERE session = ?`,
			blobsOfSession,
			`DELETE FROM leases WHERE session = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, key); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, session.ErrNotFound) {
		return err
	}
	if err != nil {
		return s.fail("delete session", err)
	}
	return nil
}

// write runs fn in a write transaction, committing if fn returns nil. The deferred rollback also
// releases the write lock if fn panics.
func (s *Store) write(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, done, err := s.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer done()
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// stamp returns the Unix microseconds a write records as its time, after every time recorded so
// far (session.Stamp). The caller's transaction holds the write lock.
func (s *Store) stamp(ctx context.Context, tx *sql.Tx) (int64, error) {
	var last int64
	if err := tx.StmtContext(ctx, s.st.stamp).QueryRowContext(ctx).Scan(&last); err != nil {
		return 0, err
	}
	return session.Stamp(time.Now(), time.UnixMicro(last)).UnixMicro(), nil
}

// beginWrite starts a write transaction once this process's other writers are done. SQLite takes
// one writer at a time anyway; queueing in-process writers here, in order, spares them its busy
// handler, which polls with growing sleeps (under 50 concurrent sessions that put the p99 of a
// turn near 0.7 s). busy_timeout still covers writers in other processes. done must be called
// after the transaction ends.
func (s *Store) beginWrite(ctx context.Context) (*sql.Tx, func(), error) {
	select {
	case s.writeSem <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	done := func() { <-s.writeSem }
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		done()
		return nil, nil, err
	}
	return tx, done, nil
}

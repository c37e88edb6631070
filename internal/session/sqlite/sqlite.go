// Package sqlite is the embedded session.Store: one SQLite file in WAL mode (pure Go, no cgo),
// so nodmix runs on one machine with no server and survives a crash at any point.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodmix/nodmix/internal/session"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// schema creates what a new file needs; migrate then brings the sessions table of any older
// file up to date. A sessions row with created NULL only tracks when its selections were last
// touched (an MCP client's session); Append and Update make it a session proper.
const schema = `
CREATE TABLE IF NOT EXISTS selections (
	session TEXT NOT NULL,
	seq     INTEGER NOT NULL,
	name    TEXT NOT NULL,
	PRIMARY KEY (session, name)
);
CREATE INDEX IF NOT EXISTS selections_order ON selections(session, seq);
CREATE TABLE IF NOT EXISTS sessions (
	session TEXT PRIMARY KEY,
	touched INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_touched ON sessions(touched);
INSERT OR IGNORE INTO sessions(session, touched) SELECT DISTINCT session, unixepoch() FROM selections;
CREATE TABLE IF NOT EXISTS blobs (
	key     TEXT PRIMARY KEY,
	session TEXT NOT NULL,
	created INTEGER NOT NULL DEFAULT (unixepoch()),
	data    BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
	session TEXT NOT NULL,
	seq     INTEGER NOT NULL, -- from 0
	role    TEXT NOT NULL,
	parts   TEXT NOT NULL,    -- session.EncodeParts
	PRIMARY KEY (session, seq)
);
CREATE TABLE IF NOT EXISTS leases (
	session TEXT PRIMARY KEY, -- may have no sessions row yet: a session's first turn leases it
	token   TEXT NOT NULL,    -- the holder: session.Holder
	host    TEXT NOT NULL,
	pid     INTEGER NOT NULL,
	start   TEXT NOT NULL,
	expires INTEGER NOT NULL  -- Unix microseconds
);
`

// sessionColumns are the columns the sessions table gained with agent sessions, added to files
// that predate them. Times are Unix microseconds; overrides and counters JSON objects.
var sessionColumns = []struct{ name, decl string }{
	{"model", "TEXT NOT NULL DEFAULT ''"},
	{"agent", "TEXT NOT NULL DEFAULT ''"},
	{"overrides", "TEXT NOT NULL DEFAULT '{}'"},
	{"counters", "TEXT NOT NULL DEFAULT '{}'"},
	{"length", "INTEGER NOT NULL DEFAULT 0"},
	{"created", "INTEGER"},
	{"updated", "INTEGER"},
}

// SchemaVersion is the layout this build writes, kept in the file's user_version: 0 is any file
// of the releases before versioning (migrate brings each up to date), 1 the tables above but
// leases, with every sessionColumns column, 2 adds leases and the blobs_session index, 3 the
// sessions_recent index of the paged listing. A build that changes the layout raises it and
// migrates from the versions before; a file of a higher version is a newer nodmix's, which this
// build refuses to open rather than write a layout it does not know.
const SchemaVersion = 3

// ErrNewerSchema: the file was written by a newer nodmix; it is left as it is.
var ErrNewerSchema = errors.New("schema version is newer than this nodmix knows")

// schemaVersion reads the file's user_version; q is the database or a transaction.
func schemaVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	if v > SchemaVersion {
		return v, fmt.Errorf("%w: the file is at version %d, this nodmix knows %d; run a newer nodmix (the file is left as it is)", ErrNewerSchema, v, SchemaVersion)
	}
	return v, nil
}

// migrate creates the schema and adds missing columns in one transaction; the write lock taken
// at its start keeps two processes opening one old file from adding a column twice. A file at
// SchemaVersion is left alone; one above it is refused before anything is written.
func migrate(ctx context.Context, db *sql.DB) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	// Read again under the write lock: another process may have migrated the file meanwhile,
	// perhaps a newer nodmix.
	v, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	if v == SchemaVersion {
		return tx.Rollback()
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info('sessions')`)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		have[n] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range sessionColumns {
		if have[c.name] {
			continue
		}
		if _, err := tx.ExecContext(ctx, `ALTER TABLE sessions ADD COLUMN `+c.name+` `+c.decl); err != nil {
			return fmt.Errorf("add column %s: %w", c.name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS sessions_updated ON sessions(updated)`); err != nil {
		return err
	}
	for _, q := range []string{blobsAgeIndex, blobsSessionIndex, sessionsRecentIndex} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	// A pragma takes no parameter; the value is this build's constant.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion)); err != nil {
		return fmt.Errorf("schema version: %w", err)
	}
	return tx.Commit()
}

// walWait bounds how long Open retries switching a file to WAL while another process holds it.
const walWait = 5 * time.Second

// useWAL puts the file in WAL mode. The switch reads the file and then needs its write lock, and
// SQLite refuses that with SQLITE_BUSY at once, without the busy handler, while another process
// writes a file still in the old journal mode (two processes opening one older file together
// did), so the switch is retried here. A file already in WAL mode answers at once.
func useWAL(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(walWait)
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		var mode string
		err := db.QueryRowContext(ctx, `PRAGMA journal_mode=WAL`).Scan(&mode)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY, in any of its extended forms.
func isBusy(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 5
}

// fail wraps err for the operation op. An error of SQLite itself or of what the file holds
// concerns the file (full disk, read-only or damaged file, a lock held too long), so it names the
// file: "database or disk is full" alone does not tell the user which disk, nor which file to
// move away. The end of the caller's context is the caller's.
func (s *Store) fail(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: state store %s: %w", op, s.path, err)
}

// Store is a session.Store in a SQLite file.
type Store struct {
	db       *sql.DB
	path     string        // the file, named in errors about it
	maxBlobs int           // MaxBlobBytes; tests lower it
	writeSem chan struct{} // one in-process writer at a time: see beginWrite
	st       stmts
}

var _ session.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("state store: %w", err)
	}
	// The file holds transcripts, tool output included: a new one is the user's alone, as the
	// config file and the session logs are. SQLite would create it 0644, and its -wal and -shm
	// files take the database file's mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state store: %w", err)
	}
	f.Close()
	// Write transactions begin IMMEDIATE: they take the write lock at once, waiting up to the busy
	// timeout, instead of failing with SQLITE_BUSY when a read must become a write (which the
	// busy timeout does not cover). Read-only transactions stay deferred and run alongside.
	// The journal mode is not in the DSN: it is the file's, set once by useWAL below.
	dsn := "file:" + uriPath(path) + "?_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("state store %s: %w", path, err)
	}
	s := &Store{db: db, path: path, maxBlobs: MaxBlobBytes, writeSem: make(chan struct{}, 1)}
	if err := s.prepare(ctx); err != nil {
		db.Close()
		if isDamaged(err) {
			// Never replaced: what can still be read of it is the user's.
			return nil, fmt.Errorf("state store %s: %w: the file is not a SQLite database or is damaged; nodmix leaves it as it is (move it aside to start with no sessions)", path, err)
		}
		return nil, fmt.Errorf("state store %s: %w", path, err)
	}
	// Connections are kept for concurrent turns' reads, with the statements prepared on them:
	// database/sql keeps two idle by default, and opening one runs the DSN's pragmas again.
	db.SetMaxIdleConns(maxIdleConns)
	db.SetConnMaxIdleTime(time.Minute)
	return s, nil
}

// maxIdleConns bounds the connections kept between uses: each holds its page cache.
const maxIdleConns = 8

// prepare readies a newly opened file: refuses a newer nodmix's, puts it in WAL mode, brings
// an older one up to date and prepares the statements of a turn.
func (s *Store) prepare(ctx context.Context) error {
	if err := s.upgrade(ctx); err != nil {
		return err
	}
	return s.prepareStmts(ctx)
}

// upgrade refuses a newer nodmix's file, puts it in WAL mode and brings an older one up to date.
func (s *Store) upgrade(ctx context.Context) error {
	// A newer nodmix's file is refused before the journal mode switch, which writes the file.
	v, err := schemaVersion(ctx, s.db)
	if err != nil {
		return err
	}
	if err := useWAL(ctx, s.db); err != nil {
		return fmt.Errorf("journal mode: %w", err)
	}
	if v == SchemaVersion {
		// Up to date: opening takes no write lock, so a `nodmix sessions list` does not wait
		// for a busy gateway's writes.
		return nil
	}
	if err := migrate(ctx, s.db); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	return nil
}

// isDamaged reports whether err is SQLite's SQLITE_CORRUPT or SQLITE_NOTADB.
func isDamaged(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && (coded.Code()&0xff == 11 || coded.Code()&0xff == 26)
}

// uriPath is path as the file name of a SQLite URI, which decodes %XX and ends at '?' or '#':
// unescaped, a directory named "a#b" would put the sessions in a file named "a", without WAL.
// Clean folds a leading "//", which would read as a host.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.Clean(path))
}

// Selected implements session.Store.
func (s *Store) Selected(ctx context.Context, sess string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM selections WHERE session = ? ORDER BY seq`, sess)
	if err != nil {
		return nil, s.fail("selections", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, s.fail("selections", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// AddSelected implements session.Store in one transaction.
func (s *Store) AddSelected(ctx context.Context, sess string, names []string) (added []string, err error) {
	tx, done, err := s.beginWrite(ctx)
	if err != nil {
		return nil, s.fail("selections", err)
	}
	defer done()
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM selections WHERE session = ?`, sess).Scan(&seq); err != nil {
		return nil, s.fail("selections", err)
	}
	for _, n := range names {
		seq++
		res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO selections(session, seq, name) VALUES (?, ?, ?)`, sess, seq, n)
		if err != nil {
			return nil, s.fail("selections", err)
		}
		if k, _ := res.RowsAffected(); k == 1 {
			added = append(added, n)
		}
	}
	if len(added) > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM selections WHERE session = ? AND seq NOT IN (
			SELECT seq FROM selections WHERE session = ? ORDER BY seq DESC LIMIT ?)`, sess, sess, session.MaxSelected); err != nil {
			return nil, s.fail("selections: bound", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO sessions(session, touched) VALUES (?, unixepoch())
		ON CONFLICT(session) DO UPDATE SET touched = excluded.touched`, sess); err != nil {
		return nil, s.fail("selections", err)
	}
	// Retention: the activations of a session that has activated nothing for MaxSelectionAge go.
	if _, err := tx.ExecContext(ctx, `DELETE FROM selections WHERE session IN (
		SELECT session FROM sessions WHERE touched < unixepoch() - ?)`, MaxSelectionAge); err != nil {
		return nil, s.fail("selections: retention", err)
	}
	// Only rows that track selections alone go: a session with a transcript or settings is kept
	// however old it is.
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE touched < unixepoch() - ? AND created IS NULL`, MaxSelectionAge); err != nil {
		return nil, s.fail("selections: retention", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, s.fail("selections", err)
	}
	return added, nil
}

// MaxSelectionAge is how long (seconds) a session's activations are kept after its last activity
// (an activation, an Append or an Update): sessions come and go with clients, and their rows must
// not pile up for ever. Sessions themselves are never dropped.
const MaxSelectionAge = 30 * 24 * 60 * 60

// Blob retention: kept raw outputs must not grow without bound, so a put drops session blobs
// older than MaxBlobAge and then the oldest ones until their total is under MaxBlobBytes. Blobs
// of no session are the app's own (a server's last tool listing), one per name and replaced by
// their owner: a week-long connection or a burst of raw outputs must not drop them.
const (
	MaxBlobAge   = 7 * 24 * 60 * 60 // seconds
	MaxBlobBytes = 256 << 20
)

// PutBlob implements session.Store, applying the retention rules in the same transaction.
func (s *Store) PutBlob(ctx context.Context, sess, key string, data []byte) (err error) {
	if data == nil {
		data = []byte{}
	}
	if len(data) > s.maxBlobs {
		return fmt.Errorf("blob: %d bytes is more than the store keeps (%d)", len(data), s.maxBlobs)
	}
	tx, done, err := s.beginWrite(ctx)
	if err != nil {
		return s.fail("blob", err)
	}
	defer done()
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO blobs(key, session, data) VALUES (?, ?, ?)`, key, sess, data); err != nil {
		return s.fail("blob", err)
	}
	if _, err := tx.ExecContext(ctx, blobsExpire, MaxBlobAge); err != nil {
		return s.fail("blob: retention", err)
	}
	if err := s.trimBlobs(ctx, tx); err != nil {
		return s.fail("blob: retention", err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail("blob", err)
	}
	return nil
}

// The queries of blob retention, which run in every put, read blobs_age alone: no scan of the
// blobs themselves, no sort of them all. With a scan and a sort (as before) a put cost time in
// proportion to the blobs kept, under the write lock every session's turn waits for: 10 ms at
// 2,500 small blobs, and the 256 MiB cap holds a hundred thousand.
const (
	blobsAgeIndex = `CREATE INDEX IF NOT EXISTS blobs_age ON blobs(created, length(data)) WHERE session != ''`
	blobsExpire   = `DELETE FROM blobs WHERE session != '' AND created < unixepoch() - ?`
	blobsTotal    = `SELECT COALESCE(SUM(length(data)), 0) FROM blobs WHERE session != ''`
	blobsOldest   = `SELECT rowid, length(data) FROM blobs WHERE session != '' ORDER BY created, rowid`
)

// DeleteSession drops a session's blobs through blobs_session; without it the delete read every
// blob kept, under the write lock.
const (
	blobsSessionIndex = `CREATE INDEX IF NOT EXISTS blobs_session ON blobs(session)`
	blobsOfSession    = `DELETE FROM blobs WHERE session = ?`
)

// trimBlobs drops the oldest session blobs until the rest fit in s.maxBlobs; the newest, just
// put, is kept (it fits by PutBlob's check).
func (s *Store) trimBlobs(ctx context.Context, tx *sql.Tx) error {
	var total int64
	if err := tx.QueryRowContext(ctx, blobsTotal).Scan(&total); err != nil {
		return err
	}
	if total <= int64(s.maxBlobs) {
		return nil
	}
	rows, err := tx.QueryContext(ctx, blobsOldest)
	if err != nil {
		return err
	}
	var drop []int64
	for total > int64(s.maxBlobs) && rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return err
		}
		drop = append(drop, id)
		total -= n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	del, err := tx.PrepareContext(ctx, `DELETE FROM blobs WHERE rowid = ?`)
	if err != nil {
		return err
	}
	defer del.Close()
	for _, id := range drop {
		if _, err := del.ExecContext(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// Blob implements session.Store.
func (s *Store) Blob(ctx context.Context, key string) ([]byte, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, `SELECT data FROM blobs WHERE key = ?`, key).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, session.ErrNotFound
	}
	if err != nil {
		return nil, s.fail("blob", err)
	}
	return b, nil
}

// Close implements session.Store.
func (s *Store) Close() error { return errors.Join(s.st.close(), s.db.Close()) }

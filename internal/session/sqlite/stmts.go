package sqlite

import (
	"context"
	"database/sql"
	"errors"
)

// The statements of every turn (BenchmarkTurnCalls: lease, transcript, append, count, append,
// unlease). Parsing them anew on each call was a third of the store's CPU in a turn.
const (
	qInfo          = `SELECT ` + infoCols + ` FROM sessions WHERE session = ?`
	qInfoLive      = `SELECT ` + infoCols + ` FROM sessions WHERE session = ? AND created IS NOT NULL`
	qLength        = `SELECT length FROM sessions WHERE session = ? AND created IS NOT NULL`
	qMessages      = `SELECT seq, role, parts FROM messages WHERE session = ? ORDER BY seq`
	qHead          = `SELECT length, created FROM sessions WHERE session = ?`
	qInsertMessage = `INSERT INTO messages(session, seq, role, parts) VALUES (?, ?, ?, ?)`
	qStamp         = `SELECT COALESCE(MAX(updated), 0) FROM sessions`
	qAppendSession = `INSERT INTO sessions(session, touched, length, created, updated)
			VALUES (?, unixepoch(), ?, ?, ?)
			ON CONFLICT(session) DO UPDATE SET touched = excluded.touched, length = excluded.length,
				created = COALESCE(sessions.created, excluded.created), updated = excluded.updated
			RETURNING ` + infoCols
	qUpdateSession = `INSERT INTO sessions(session, touched, model, agent, overrides, counters, created, updated)
			VALUES (?, unixepoch(), ?, ?, ?, ?, ?, ?)
			ON CONFLICT(session) DO UPDATE SET touched = excluded.touched, model = excluded.model,
				agent = excluded.agent, overrides = excluded.overrides, counters = excluded.counters,
				created = COALESCE(sessions.created, excluded.created), updated = excluded.updated
			RETURNING ` + infoCols
	qLeaseGet    = `SELECT token, host, pid, start, expires FROM leases WHERE session = ?`
	qLeaseExpire = `DELETE FROM leases WHERE expires <= ? AND session != ?`
	qLeaseUpsert = `INSERT INTO leases(session, token, host, pid, start, expires) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT(session) DO UPDATE SET token = excluded.token, host = excluded.host, pid = excluded.pid,
				start = excluded.start, expires = excluded.expires`
	qLeaseRelease = `DELETE FROM leases WHERE session = ? AND token = ?`
)

// stmts holds the turn's statements, prepared once when the store opens. database/sql prepares
// a *sql.Stmt again on each connection it first runs on and keeps it there, and Tx.StmtContext
// uses the connection's copy. They are read-only after Open and safe for concurrent use.
type stmts struct {
	info, infoLive, length, messages, head, insertMessage, stamp, appendSession, updateSession,
	leaseGet, leaseExpire, leaseUpsert, leaseRelease *sql.Stmt
}

// prepareStmts prepares s.st; on an error none stays open.
func (s *Store) prepareStmts(ctx context.Context) error {
	for _, p := range []struct {
		dst   **sql.Stmt
		query string
	}{
		{&s.st.info, qInfo}, {&s.st.infoLive, qInfoLive}, {&s.st.length, qLength},
		{&s.st.messages, qMessages}, {&s.st.head, qHead}, {&s.st.insertMessage, qInsertMessage},
		{&s.st.stamp, qStamp}, {&s.st.appendSession, qAppendSession}, {&s.st.updateSession, qUpdateSession},
		{&s.st.leaseGet, qLeaseGet}, {&s.st.leaseExpire, qLeaseExpire}, {&s.st.leaseUpsert, qLeaseUpsert},
		{&s.st.leaseRelease, qLeaseRelease},
	} {
		st, err := s.db.PrepareContext(ctx, p.query)
		if err != nil {
			return errors.Join(err, s.st.close())
		}
		*p.dst = st
	}
	return nil
}

// close closes the statements that are open.
func (st *stmts) close() error {
	var errs []error
	for _, p := range []**sql.Stmt{&st.info, &st.infoLive, &st.length, &st.messages, &st.head,
		&st.insertMessage, &st.stamp, &st.appendSession, &st.updateSession, &st.leaseGet,
		&st.leaseExpire, &st.leaseUpsert, &st.leaseRelease} {
		if *p != nil {
			errs = append(errs, (*p).Close())
			*p = nil
		}
	}
	return errors.Join(errs...)
}

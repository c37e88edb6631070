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

// stmtQuery is a statement of stmts and its query.
type stmtQuery struct {
	dst   **sql.Stmt
	query string
}

// list pairs each statement with its query: the one list prepare and close go through.
func (st *stmts) list() []stmtQuery {
	return []stmtQuery{
		{&st.info, qInfo}, {&st.infoLive, qInfoLive}, {&st.length, qLength},
		{&st.messages, qMessages}, {&st.head, qHead}, {&st.insertMessage, qInsertMessage},
		{&st.stamp, qStamp}, {&st.appendSession, qAppendSession}, {&st.updateSession, qUpdateSession},
		{&st.leaseGet, qLeaseGet}, {&st.leaseExpire, qLeaseExpire}, {&st.leaseUpsert, qLeaseUpsert},
		{&st.leaseRelease, qLeaseRelease},
	}
}

// prepareStmts prepares s.st; on an error none stays open.
func (s *Store) prepareStmts(ctx context.Context) error {
	for _, p := range s.st.list() {
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
	for _, p := range st.list() {
		if *p.dst != nil {
			errs = append(errs, (*p.dst).Close())
			*p.dst = nil
		}
	}
	return errors.Join(errs...)
}

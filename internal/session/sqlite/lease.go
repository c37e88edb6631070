package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/nodmix/nodmix/internal/session"
)

// Lease takes the session key for h until ttl from now, or renews h's lease (the one of its
// Token). It returns session.ErrLeased, changing nothing, while another holder's lease keeps h
// out (Holder.KeepsOut). The check and the claim are one write transaction, which holds the
// file's write lock from its start, so of two processes claiming at once one wins. A key no
// session has yet can be leased; DeleteSession ends the lease.
func (s *Store) Lease(ctx context.Context, key string, h session.Holder, ttl time.Duration) error {
	if err := session.CheckLease(key, h.Token); err != nil {
		return err
	}
	if ttl <= 0 {
		return fmt.Errorf("lease: ttl: must be positive (got %v)", ttl)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		now := time.Now()
		var held session.Holder
		var expires int64
		err := tx.StmtContext(ctx, s.st.leaseGet).QueryRowContext(ctx, key).
			Scan(&held.Token, &held.Host, &held.PID, &held.Start, &expires)
		switch {
		case err == nil:
			if held.KeepsOut(h.Token, time.UnixMicro(expires), now) {
				return session.ErrLeased
			}
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		// The leases of holders that never let go (killed) go once expired: rows of sessions
		// never leased again must not pile up.
		if _, err := tx.StmtContext(ctx, s.st.leaseExpire).ExecContext(ctx, now.UnixMicro(), key); err != nil {
			return err
		}
		_, err = tx.StmtContext(ctx, s.st.leaseUpsert).ExecContext(ctx, key, h.Token, h.Host, h.PID, h.Start, now.Add(ttl).UnixMicro())
		return err
	})
	if errors.Is(err, session.ErrLeased) {
		return err
	}
	if err != nil {
		return s.fail("lease", err)
	}
	return nil
}

// Unlease ends the lease of key that token took; a lease another holder took since is left.
func (s *Store) Unlease(ctx context.Context, key, token string) error {
	if err := session.CheckLease(key, token); err != nil {
		return err
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, s.st.leaseRelease).ExecContext(ctx, key, token)
		return err
	})
	if err != nil {
		return s.fail("unlease", err)
	}
	return nil
}

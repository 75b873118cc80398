package main

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
)

// lowDiskPoll is how often a daemon below the disk's reserve looks whether
// space was freed, for start-up work that waits for it and for the line
// that says writes resumed. Writes themselves need no polling: each one
// checks the free space (kv.DB.Apply).
const lowDiskPoll = 2 * time.Second

// lowDiskStart is what `folio serve`'s start-up wrote, so that a daemon
// starting below the disk's reserve ([storage] min_free) says in one
// warning which start-up writes were made within the reserve and which
// wait until writes resume.
//
// Start-up writes and where they go below the reserve:
//   - creating the store (Pebble's first manifest, OPTIONS, an empty log:
//     about 1 MiB, checked by kv.Open against the free space itself);
//   - the owner migration's marker (a few bytes, once) and, on a store
//     written before users had ids, its rewritten records: within the
//     reserve when the batch is at most kv.MaxReservedWrite, otherwise the
//     daemon waits for free space before serving (a store of that age and
//     size is the only case);
//   - the first admin user and token (under a KiB, once);
//   - tasks a crash interrupted, back to the queue (one small record each,
//     once), within the reserve while kv.ReservedBudget lasts, the rest
//     once writes resume (task.Runner.RecoveryWaiting);
//   - recovery checkpoints are made when an editor opens a document, not
//     at start-up: below the reserve they wait (repo.Repo.OpenDraft) and
//     the editor gets the unsealed draft.
//
// Each of those is written once (the next start finds it done), so a
// daemon restarting in a loop does not spend the reserve again.
type lowDiskStart struct {
	below    bool // the disk was below the reserve when the store opened
	migrated bool // the owner migration wrote its batch within the reserve
	waited   bool // the owner migration waited for free space
	admin    bool // the first admin was created
	tasks    int  // interrupted tasks waiting for free space
}

// openServed opens the store for the daemon and migrates its owners
// (openStore), waiting for free space when the migration does not fit in
// the disk's reserve.
func openServed(ctx context.Context, dir string, o repo.Options, log *slog.Logger, low *lowDiskStart) (*repo.Repo, error) {
	r, err := repo.Open(dir, o)
	if err != nil {
		return nil, err
	}
	low.below = kv.BelowReserve(r.DB().Writable())
	for {
		rep, err := r.MigrateOwners(ctx, auth.New(r.DB()))
		if err == nil {
			low.migrated = low.below && !low.waited && !rep.Done
			return r, nil
		}
		if !kv.BelowReserve(err) {
			r.Close()
			return nil, err
		}
		if !low.waited {
			log.Warn("the disk is below the storage reserve and the owner migration does not fit in it: waiting for free space before serving",
				"reason", errs.Message(err))
			low.waited = true
		}
		if err := waitWritable(ctx, r.DB()); err != nil {
			r.Close()
			return nil, err
		}
	}
}

// waitWritable returns once db accepts writes again, or ctx's error.
func waitWritable(ctx context.Context, db *kv.DB) error {
	t := time.NewTicker(lowDiskPoll)
	defer t.Stop()
	for db.Writable() != nil {
		if f := db.Failure(); f != nil {
			return f
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// report logs the one warning of a daemon serving below the disk's
// reserve, naming what start-up wrote within the reserve and what waits,
// and logs again once writes resume.
func (low *lowDiskStart) report(ctx context.Context, db *kv.DB, log *slog.Logger) {
	err := db.Writable()
	if !kv.BelowReserve(err) {
		return
	}
	var within, waiting []string
	if low.migrated {
		within = append(within, "owner migration")
	}
	if low.admin {
		within = append(within, "first admin user")
	}
	if low.tasks > 0 {
		waiting = append(waiting, strconv.Itoa(low.tasks)+" interrupted tasks back to the queue")
	}
	waiting = append(waiting, "recovery checkpoints of drafts an editor opens")
	if len(within) == 0 {
		within = append(within, "nothing")
	}
	log.Warn("the disk is below the storage reserve: serving every read; writes answer 507 storage_full and resume by themselves once space is freed",
		"reason", errs.Message(err),
		"written_within_reserve", strings.Join(within, ", "),
		"waiting_for_space", strings.Join(waiting, ", "))
	go func() {
		if waitWritable(ctx, db) == nil {
			log.Info("the disk has room again: writes resume")
		}
	}()
}

package syncrepo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/syncproto"
)

// Content is what the sync server uses of the content service
// (*repo.Repo implements it).
type Content interface {
	OpenDraft(ctx context.Context, doc, actor string) (repo.Draft, *repo.VersionInfo, error)
	SaveDraft(ctx context.Context, p repo.SaveParams) (repo.SaveResult, error)
	Checkpoint(ctx context.Context, doc, reason, actor, message string) (repo.VersionInfo, bool, error)
	Seal(ctx context.Context, doc, reason, actor string) (repo.VersionInfo, bool, error)
	Restore(ctx context.Context, doc, label, actor string) (repo.VersionInfo, error)
	Draft(ctx context.Context, doc string) (repo.Draft, error)
}

var _ Content = (*repo.Repo)(nil)

// Docs implements syncproto.Docs over a Content.
type Docs struct{ Content Content }

var _ syncproto.Docs = Docs{}

// OpenDraft implements syncproto.Docs.
func (d Docs) OpenDraft(ctx context.Context, doc, actor string) (syncproto.Draft, *syncproto.VersionInfo, error) {
	dr, rec, err := d.Content.OpenDraft(ctx, doc, actor)
	if err != nil {
		return syncproto.Draft{}, nil, err
	}
	var v *syncproto.VersionInfo
	if rec != nil {
		w := Version(*rec)
		v = &w
	}
	return draft(dr), v, nil
}

// SaveDraft implements syncproto.Docs.
func (d Docs) SaveDraft(ctx context.Context, p syncproto.SaveParams) (syncproto.SaveResult, error) {
	rp := repo.SaveParams{Doc: p.Doc, Actor: p.Actor, Session: p.Session, BaseSeq: p.BaseSeq, Body: p.Body, Attrs: p.Attrs,
		Merge: p.Merge}
	if p.Changes != nil {
		rp.Changes = make([]repo.DraftChange, len(p.Changes))
		for i, c := range p.Changes {
			rp.Changes[i] = repo.DraftChange{Op: c.Op, Block: c.Block, BlockID: c.BlockID, After: c.After}
		}
	}
	res, err := d.Content.SaveDraft(ctx, rp)
	if err != nil { // a stale baseline is the repository's *folio.ConflictError, sent from its fields
		return syncproto.SaveResult{}, err
	}
	out := syncproto.SaveResult{Seq: res.Seq, Fingerprint: res.Fingerprint, Unsealed: res.Unsealed, Changed: res.Changed}
	for _, b := range res.Merged {
		out.Merged = append(out.Merged, syncproto.EventBlock{ID: b.ID, Block: b.Block})
	}
	return out, nil
}

// Checkpoint implements syncproto.Docs.
func (d Docs) Checkpoint(ctx context.Context, doc, reason, actor, message string) (syncproto.VersionInfo, bool, error) {
	v, created, err := d.Content.Checkpoint(ctx, doc, reason, actor, message)
	return Version(v), created, err
}

// Seal implements syncproto.Docs.
func (d Docs) Seal(ctx context.Context, doc, reason, actor string) (syncproto.VersionInfo, bool, error) {
	v, created, err := d.Content.Seal(ctx, doc, reason, actor)
	return Version(v), created, err
}

// Restore implements syncproto.Docs.
func (d Docs) Restore(ctx context.Context, doc, label, actor string) (syncproto.VersionInfo, error) {
	v, err := d.Content.Restore(ctx, doc, label, actor)
	return Version(v), err
}

// Draft implements syncproto.Docs.
func (d Docs) Draft(ctx context.Context, doc string) (syncproto.Draft, error) {
	dr, err := d.Content.Draft(ctx, doc)
	return draft(dr), err
}

func draft(d repo.Draft) syncproto.Draft {
	return syncproto.Draft{Seq: d.Seq, Body: d.Body, Attrs: d.Attrs, Fingerprint: d.Fingerprint, Head: d.Head,
		Unsealed: d.Unsealed, UnsealedSince: d.UnsealedSince}
}

// Version is the wire form of a version.
func Version(v repo.VersionInfo) syncproto.VersionInfo {
	return syncproto.VersionInfo{Doc: v.Doc, Label: v.Label, Seq: v.Seq, Kind: v.Kind, Reason: v.Reason,
		Hash: syncproto.Hash(v.Hash), Author: v.Author, Time: v.Time, Message: v.Message, Fingerprint: v.Fingerprint,
		RestoredFrom: v.RestoredFrom, Blocks: v.Blocks, Published: v.Published}
}

// Streams is what Events reads of the content service: its persisted
// event streams and the notice of their next event (*repo.Repo
// implements it).
type Streams interface {
	ReadEvents(ctx context.Context, name string, after uint64, limit int) ([]stream.Event, error)
	LastEvent(ctx context.Context, name string) (uint64, error)
	FirstRetained(ctx context.Context, name string) (uint64, error)
	WatchEvents(name string, fn func()) (stop func())
}

var _ Streams = (*repo.Repo)(nil)

// Events implements syncproto.Events over the content service's streams.
type Events struct {
	Streams Streams
	// Logger logs stored events whose data does not decode (they are
	// delivered without data); nil: discard.
	Logger *slog.Logger
}

var _ syncproto.Events = Events{}

// Read implements syncproto.Events.
func (s Events) Read(ctx context.Context, name string, after uint64, limit int) ([]syncproto.StreamEvent, error) {
	evs, err := s.Streams.ReadEvents(ctx, name, after, limit)
	if errors.Is(err, stream.ErrTrimmed) {
		return nil, fmt.Errorf("%w: %v", syncproto.ErrTrimmed, err)
	}
	if err != nil {
		return nil, err
	}
	out := make([]syncproto.StreamEvent, len(evs))
	for i, e := range evs {
		data, err := Data(e)
		if err != nil && s.Logger != nil {
			s.Logger.Error("sync: decode stored event", "stream", name, "seq", e.Seq, "type", e.Type, "err", err)
		}
		out[i] = syncproto.StreamEvent{Cursor: e.Seq, Type: e.Type, Time: e.Time, Data: data}
	}
	return out, nil
}

// Last implements syncproto.Events.
func (s Events) Last(ctx context.Context, name string) (uint64, error) {
	return s.Streams.LastEvent(ctx, name)
}

// FirstRetained implements syncproto.Events.
func (s Events) FirstRetained(ctx context.Context, name string) (uint64, error) {
	return s.Streams.FirstRetained(ctx, name)
}

// Watch implements syncproto.Events.
func (s Events) Watch(name string, fn func()) (stop func()) { return s.Streams.WatchEvents(name, fn) }

// Data turns a stored event's payload into its wire data: draft.updated
// (repo.DraftEvent) into a *syncproto.DraftUpdated, version.created
// (repo.VersionEvent) into a *syncproto.VersionCreated, owner.changed
// into a *syncproto.OwnerChanged; any other event's data is validated and
// passed through as stored (syncproto.RawData), never decoded into
// interface values. On error the data is nil.
func Data(e stream.Event) (any, error) {
	if len(e.Data) == 0 {
		return nil, nil
	}
	doc := strings.TrimPrefix(e.Stream, "doc:")
	switch e.Type {
	case syncproto.TypeDraftUpdated:
		var v repo.DraftEvent
		if err := kv.Unmarshal(e.Data, &v); err != nil {
			return nil, err
		}
		du := &syncproto.DraftUpdated{Doc: doc, Seq: v.Seq, Actor: v.Actor, Session: v.Session, Fingerprint: v.Fingerprint,
			Unsealed: v.Unsealed, Order: v.Order, Attrs: v.Attrs, Authors: v.Authors}
		if v.Blocks != nil {
			du.Blocks = make([]syncproto.EventBlock, len(v.Blocks))
			for i, b := range v.Blocks {
				du.Blocks[i] = syncproto.EventBlock{ID: b.ID, Block: b.Block}
			}
		}
		return du, nil
	case syncproto.TypeVersionCreated:
		var v repo.VersionEvent
		if err := kv.Unmarshal(e.Data, &v); err != nil {
			return nil, err
		}
		return &syncproto.VersionCreated{Doc: doc, Label: v.Label, Seq: v.Seq, Kind: v.Kind, Reason: v.Reason,
			Hash: syncproto.Hash(v.Hash), Author: v.Author, Time: e.Time, Fingerprint: v.Fingerprint,
			RestoredFrom: v.RestoredFrom}, nil
	case syncproto.TypeOwnerChanged:
		var v repo.OwnerEvent
		if err := kv.Unmarshal(e.Data, &v); err != nil {
			return nil, err
		}
		return &syncproto.OwnerChanged{Doc: doc, From: v.From, FromName: v.FromName, To: v.To, ToName: v.ToName,
			Actor: v.Actor, Time: e.Time}, nil
	}
	raw, err := syncproto.PassThrough(e.Data)
	if err != nil {
		return nil, err
	}
	return raw, nil
}

package syncproto

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/internal/errs"
)

// requestTimeout bounds one request's call into the repository.
const requestTimeout = 30 * time.Second

// hello answers a hello: it authenticates with the hello's token or, when
// it has none, the upgrade's bearer token. A hello on a connection that is
// already authenticated is answered with the welcome again.
func (c *conn) hello(m *Hello) {
	if _, ok := c.principalIfAuthed(); ok {
		c.welcome(m.ID)
		return
	}
	token := m.Token
	if token == "" {
		token = c.header
	}
	if c.authenticate(token) {
		c.welcome(m.ID)
	}
}

// authenticate checks token; on failure it closes the connection with
// CloseAuthFailed.
func (c *conn) authenticate(token string) bool {
	if token == "" {
		c.closeWith(CloseAuthFailed, "authentication failed: no token in hello or Authorization header", false)
		return false
	}
	ctx, cancel := context.WithTimeout(c.vals, requestTimeout)
	defer cancel()
	for {
		gen := c.srv.revokes.Load()
		p, err := c.srv.cfg.Auth.Authenticate(ctx, token)
		if err != nil {
			if !errors.Is(err, ErrUnauthenticated) {
				c.srv.log.Warn("sync: authenticate failed", "session", c.session, "err", err)
			}
			c.closeWith(CloseAuthFailed, "authentication failed: unknown or revoked token", false)
			return false
		}
		c.mu.Lock()
		c.who, c.authed = p, true
		if c.helloTimer != nil {
			c.helloTimer.Stop()
			c.helloTimer = nil
		}
		c.mu.Unlock()
		if c.srv.revokes.Load() == gen {
			return true
		}
		// A revocation ran while the token was checked and may have
		// skipped this connection, not yet authenticated: check again.
	}
}

func (c *conn) welcome(id string) {
	p := c.principal()
	c.send(&Welcome{Envelope: Envelope{ID: id}, User: p.User, Admin: p.Admin, Session: c.session,
		Protocol: c.codec.Name(), Limits: c.srv.Limits()})
}

func (c *conn) handle(m Message) {
	switch m := m.(type) {
	case *Open:
		c.openDoc(m)
	case *Leave:
		c.leave(m)
	case *Save, *Checkpoint, *Restore:
		if c.principal().ReadOnly {
			c.replyError(m.Env().ID, CodeReadOnly, "a backup token may only read; use an author's token to change documents")
			return
		}
		switch m := m.(type) {
		case *Save:
			c.save(m)
		case *Checkpoint:
			c.checkpoint(m)
		case *Restore:
			c.restore(m)
		}
	case *Subscribe:
		c.subscribe(m)
	case *Unsubscribe:
		c.unsubscribe(m)
	case *Ping:
		c.send(&Pong{Envelope: Envelope{ID: m.ID}, Time: time.Now().UnixMilli()})
	case *AttrsSuggest:
		c.suggestAttrs(m)
	default:
		if c.handleAssist(m) {
			return
		}
		c.replyError(m.Env().ID, CodeUnknownType, fmt.Sprintf("%q is not a message a client sends", m.Env().Type))
	}
}

// checkDoc validates a document id and the caller's access to it. A
// document the caller may not see is answered as missing.
func (c *conn) checkDoc(id, doc string) bool {
	if !ValidDocID(doc) {
		c.replyError(id, CodeInvalid, fmt.Sprintf("document id %q is not 1-64 characters of A-Z a-z 0-9 _ -", doc))
		return false
	}
	ctx, cancel := context.WithTimeout(c.vals, requestTimeout)
	defer cancel()
	if !c.srv.cfg.Access.CanAccess(ctx, c.principal(), doc) {
		c.replyErr(id, docNotFound(doc))
		return false
	}
	return true
}

func (c *conn) principal() Principal {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.who
}

func (c *conn) isOpen(doc string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open.get(doc) != nil
}

func (c *conn) openDoc(m *Open) {
	if !c.checkDoc(m.ID, m.Doc) {
		return
	}
	name := DocStream(m.Doc)
	c.mu.Lock()
	opened := c.open.has(m.Doc)
	subscribed := c.subs.has(name)
	full := c.subs.len() >= c.srv.cfg.MaxSubscriptions
	c.mu.Unlock()
	// An open document whose subscription ended (resync) may be opened
	// again for a fresh snapshot.
	reopen := opened && !subscribed
	switch {
	case opened && subscribed:
		c.replyError(m.ID, CodeAlreadySubscribed, fmt.Sprintf("document %q is already open on this connection", m.Doc))
		return
	case subscribed:
		c.replyError(m.ID, CodeAlreadySubscribed, fmt.Sprintf("stream %s is subscribed on this connection; unsubscribe before opening the document", name))
		return
	case full:
		c.replyError(m.ID, CodeTooManySubscriptions, fmt.Sprintf("at most %d subscriptions and open documents per connection", c.srv.cfg.MaxSubscriptions))
		return
	}

	ctx, cancel := context.WithTimeout(c.vals, requestTimeout)
	defer cancel()
	// The cursor is read before the draft: events after it may already be
	// in the draft (the client skips those by seq), none can be missed.
	cursor, err := c.srv.cfg.Events.Last(ctx, name)
	if err != nil {
		c.internal(m.ID, "read stream "+name, err)
		return
	}
	who := c.principal()
	d, recovered, err := c.srv.cfg.Docs.OpenDraft(ctx, m.Doc, who.User)
	if err != nil {
		c.repoError(m.ID, m.Doc, "open", err)
		return
	}
	if recovered != nil {
		c.srv.cfg.Metrics.checkpoint(ReasonRecovery)
	}
	c.send(&Snapshot{Envelope: Envelope{ID: m.ID}, Doc: m.Doc, Seq: d.Seq, Body: d.Body, Attrs: d.Attrs,
		Fingerprint: d.Fingerprint, Head: d.Head, Unsealed: d.Unsealed, UnsealedSince: d.UnsealedSince,
		Stream: name, Cursor: cursor, Recovered: recovered})
	if !reopen {
		c.mu.Lock()
		c.open.set(m.Doc, &openDoc{})
		c.mu.Unlock()
	}
	c.startSub(name, cursor)
}

func (c *conn) leave(m *Leave) {
	c.mu.Lock()
	od := c.open.get(m.Doc)
	c.open.del(m.Doc)
	c.mu.Unlock()
	if od == nil {
		c.replyError(m.ID, CodeNotOpen, fmt.Sprintf("document %q is not open on this connection", m.Doc))
		return
	}
	c.stopSub(DocStream(m.Doc))
	var v *VersionInfo
	if od.dirty {
		ctx, cancel := context.WithTimeout(c.vals, requestTimeout)
		var err error
		v, err = c.srv.leaveCheckpoint(ctx, m.Doc, c.principal().User)
		cancel()
		if err != nil {
			c.repoError(m.ID, m.Doc, "seal leave checkpoint", err)
			return
		}
	}
	c.sendEnding(&Left{Envelope: Envelope{ID: m.ID}, Doc: m.Doc, Version: v}, DocStream(m.Doc))
}

func (c *conn) save(m *Save) {
	start := time.Now()
	if !c.isOpen(m.Doc) {
		c.replyError(m.ID, CodeNotOpen, fmt.Sprintf("open document %q before saving to it", m.Doc))
		return
	}
	if m.BaseSeq == 0 {
		c.replyErr(m.ID, errs.E(errs.Invalid, "draft.save needs baseSeq, the seq of the copy the save is based on (snapshot.seq, then each draft.ack's); no draft is at seq 0"))
		return
	}
	// Everything else about the save (limits, fields, ops, blocks) is
	// checked by the content service, as for every other way in.
	who := c.principal()
	ctx, cancel := context.WithTimeout(c.vals, requestTimeout)
	defer cancel()
	if m.Key != "" {
		ks, replied := c.keyedSave(ctx, m, who)
		if replied {
			return
		}
		var ack *Ack // set when the save is acknowledged
		defer func() { c.srv.keys.finish(ks, ack, time.Now()) }()
		c.saveNow(ctx, m, who, start, &ack)
		return
	}
	c.saveNow(ctx, m, who, start, nil)
}

// keyedSave looks up a keyed save. When it was acknowledged before, its
// ack is sent again (after the events before it, as any ack) and replied
// is true; when it is new the caller makes the attempt and finishes ks.
func (c *conn) keyedSave(ctx context.Context, m *Save, who Principal) (ks *keyedSave, replied bool) {
	if err := checkSaveKey(m.Key); err != nil {
		c.replyErr(m.ID, err)
		return nil, true
	}
	id := m.Doc + "\x00" + who.UserID + "\x00" + who.User + "\x00" + m.Key
	sum := saveSum(m)
	for {
		ks, owner, err := c.srv.keys.begin(id, sum, time.Now())
		if err != nil {
			c.replyErr(m.ID, err)
			return nil, true
		}
		if owner {
			return ks, false
		}
		select {
		case <-ks.done:
		case <-ctx.Done():
			c.repoError(m.ID, m.Doc, "save", ctx.Err())
			return nil, true
		}
		if ks.ack != nil {
			c.catchUp(ctx, m.Doc)
			a := *ks.ack
			a.Envelope = Envelope{ID: m.ID}
			c.send(&a)
			c.srv.cfg.Metrics.save("retry", 0)
			return nil, true
		}
		// The first attempt stored nothing: this one is a new attempt.
	}
}

// saveNow applies a save and answers it; *acked is set to the ack sent.
func (c *conn) saveNow(ctx context.Context, m *Save, who Principal, start time.Time, acked **Ack) {
	res, err := c.srv.cfg.Docs.SaveDraft(ctx, SaveParams{Doc: m.Doc, Actor: who.User, Session: c.session,
		BaseSeq: m.BaseSeq, Body: m.Body, Changes: m.Changes, Attrs: m.Attrs, Merge: m.Merge})
	var ce *folio.ConflictError
	if err == nil || errors.As(err, &ce) {
		// The ack (or conflict) of seq S follows every update below S.
		c.catchUp(ctx, m.Doc)
	}
	switch {
	case err == nil:
	case errors.As(err, &ce):
		c.srv.cfg.Metrics.save("conflict", 0)
		blocks := ce.Blocks
		if blocks == nil {
			blocks = []folio.ConflictBlock{}
		}
		c.send(&Conflict{Envelope: Envelope{ID: m.ID}, Doc: m.Doc, Seq: ce.Seq, Check: ce.Check, BaseSeq: ce.BaseSeq, Missing: ce.Missing,
			Reason: ce.Reason, Blocks: blocks})
		return
	case errors.Is(err, errs.Invalid), errors.Is(err, errs.TooLarge):
		c.srv.cfg.Metrics.save("invalid", 0)
		c.replyErr(m.ID, err)
		return
	default:
		c.srv.cfg.Metrics.save("error", 0)
		c.repoError(m.ID, m.Doc, "save", err)
		return
	}
	c.mu.Lock()
	if od := c.open.get(m.Doc); od != nil {
		od.dirty = true
	}
	c.mu.Unlock()
	ack := &Ack{Envelope: Envelope{ID: m.ID}, Doc: m.Doc, Seq: res.Seq, Fingerprint: res.Fingerprint,
		Unsealed: res.Unsealed, Changed: res.Changed, Merged: res.Merged}
	if acked != nil {
		*acked = ack
	}
	c.send(ack)
	c.srv.cfg.Metrics.save("ack", time.Since(start))
	if len(res.Merged) > 0 {
		c.srv.cfg.Metrics.save("merged", 0)
	}
}

func (c *conn) checkpoint(m *Checkpoint) {
	reason := m.Reason
	if reason == "" {
		reason = ReasonManual
	}
	if !c.checkDoc(m.ID, m.Doc) {
		return
	}
	ctx, cancel := context.WithTimeout(c.vals, requestTimeout)
	defer cancel()
	v, created, err := c.srv.cfg.Docs.Checkpoint(ctx, m.Doc, reason, c.principal().User, m.Message)
	if err != nil {
		c.repoError(m.ID, m.Doc, "checkpoint", err)
		return
	}
	c.catchUp(ctx, m.Doc)
	if created {
		c.srv.cfg.Metrics.checkpoint(reason)
		c.mu.Lock()
		if od := c.open.get(m.Doc); od != nil {
			od.dirty = false
		}
		c.mu.Unlock()
	}
	c.send(&CheckpointDone{Envelope: Envelope{ID: m.ID}, Doc: m.Doc, Created: created, Version: v})
}

func (c *conn) restore(m *Restore) {
	if !c.checkDoc(m.ID, m.Doc) {
		return
	}
	ctx, cancel := context.WithTimeout(c.vals, requestTimeout)
	defer cancel()
	v, err := c.srv.cfg.Docs.Restore(ctx, m.Doc, m.Label, c.principal().User)
	if err != nil {
		c.repoError(m.ID, m.Doc, "restore", err)
		return
	}
	c.catchUp(ctx, m.Doc)
	c.srv.cfg.Metrics.checkpoint(ReasonRestore)
	c.send(&RestoreDone{Envelope: Envelope{ID: m.ID}, Doc: m.Doc, Version: v})
}

// repoError answers a repository error with its code and kind; internal
// errors are logged and answered without their details.
func (c *conn) repoError(id, doc, what string, err error) {
	switch {
	case errors.Is(err, context.Canceled) && c.ctx.Err() != nil:
		c.replyError(id, CodeUnavailable, "the connection is closing")
	case errs.KindOf(err) == errs.Internal:
		c.internal(id, what+" "+doc, err)
	default:
		c.replyErr(id, err)
	}
}

func (c *conn) internal(id, what string, err error) {
	c.srv.log.Error("sync: request failed", "session", c.session, "what", what, "err", err)
	c.replyError(id, CodeInternal, what+" failed on the server; retry, and report it if it persists")
}

// streamAllowed checks a stream name and the caller's access to it.
func (c *conn) streamAllowed(id, name string) bool {
	kind, rest, ok := strings.Cut(name, ":")
	if !ok || rest == "" || len(name) > 300 {
		c.replyError(id, CodeInvalid, fmt.Sprintf("stream %q is not <kind>:<id>", name))
		return false
	}
	switch kind {
	case "doc":
		return c.checkDoc(id, rest)
	case "run", "task":
		ctx, cancel := context.WithTimeout(c.vals, requestTimeout)
		defer cancel()
		if !c.srv.cfg.Access.CanReadStream(ctx, c.principal(), name) {
			c.replyError(id, CodeNotFound, fmt.Sprintf("stream %q not found", name))
			return false
		}
		return true
	}
	c.replyError(id, CodeInvalid, fmt.Sprintf("stream kind %q is not doc, run or task", kind))
	return false
}

func (c *conn) subscribe(m *Subscribe) {
	if !c.streamAllowed(m.ID, m.Stream) {
		return
	}
	c.mu.Lock()
	dup := c.subs.has(m.Stream)
	full := c.subs.len() >= c.srv.cfg.MaxSubscriptions
	c.mu.Unlock()
	if dup {
		c.replyError(m.ID, CodeAlreadySubscribed, fmt.Sprintf("stream %s is already subscribed on this connection", m.Stream))
		return
	}
	if full {
		c.replyError(m.ID, CodeTooManySubscriptions, fmt.Sprintf("at most %d subscriptions and open documents per connection", c.srv.cfg.MaxSubscriptions))
		return
	}
	ctx, cancel := context.WithTimeout(c.vals, requestTimeout)
	defer cancel()
	last, err := c.srv.cfg.Events.Last(ctx, m.Stream)
	if err != nil {
		c.internal(m.ID, "read stream "+m.Stream, err)
		return
	}
	after := last
	if m.After != nil {
		after = *m.After
		first, err := c.srv.cfg.Events.FirstRetained(ctx, m.Stream)
		if err != nil {
			c.internal(m.ID, "read stream "+m.Stream, err)
			return
		}
		if after+1 < first || after > last {
			// Older than retention, or from a future this store never had
			// (a restored backup): either way the client must reload.
			c.send(&Resync{Envelope: Envelope{ID: m.ID}, Stream: m.Stream, After: after, First: first, Last: last})
			return
		}
	}
	c.send(&Subscribed{Envelope: Envelope{ID: m.ID}, Stream: m.Stream, Cursor: after, Last: last})
	c.startSub(m.Stream, after)
}

func (c *conn) unsubscribe(m *Unsubscribe) {
	if strings.HasPrefix(m.Stream, "doc:") && c.isOpen(strings.TrimPrefix(m.Stream, "doc:")) {
		c.replyError(m.ID, CodeInvalid, fmt.Sprintf("stream %s belongs to an open document; send leave", m.Stream))
		return
	}
	if !c.stopSub(m.Stream) {
		c.replyError(m.ID, CodeNotSubscribed, fmt.Sprintf("stream %s is not subscribed on this connection", m.Stream))
		return
	}
	c.sendEnding(&Unsubscribed{Envelope: Envelope{ID: m.ID}, Stream: m.Stream}, m.Stream)
}

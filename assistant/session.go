package assistant

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
)

// Session is one user's conversation about an article. An article resumes
// the caller's most recently updated session on it. A session is its
// creator's alone (CreatorID, the user id): anyone else is answered as if
// it did not exist.
type Session struct {
	ID      string `json:"id" msgpack:"id"`
	Doc     string `json:"doc" msgpack:"doc"`
	Title   string `json:"title,omitempty" msgpack:"title,omitempty"`
	Creator string `json:"creator,omitempty" msgpack:"creator,omitempty"` // name, as recorded
	// CreatorID is the creator's user id: whose session it is.
	CreatorID string `json:"creatorId" msgpack:"creatorid"`
	Created   int64  `json:"created" msgpack:"created"` // Unix ms
	Updated   int64  `json:"updated" msgpack:"updated"`
	// Messages is the number of messages; their seqs are 1..Messages.
	Messages uint64 `json:"messages" msgpack:"messages"`
	// Current marks, in a listing, the session a request without one
	// continues (not stored: the pointer is a record of its own).
	Current bool `json:"current,omitempty" msgpack:"-"`
	// Choice is the session's current personalization (choice.go): what
	// the editor's selector shows and its requests send; nil until set.
	Choice *Choice `json:"personalization,omitempty" msgpack:"choice,omitempty"`
}

// Role is who wrote a message.
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one immutable message of a session. A user message records
// the article version and scope its request was made against; the
// assistant message of a run names its suggestion (none when the run
// proposed no change).
type Message struct {
	Session string `json:"session" msgpack:"session"`
	Seq     uint64 `json:"seq" msgpack:"seq"`
	Role    Role   `json:"role" msgpack:"role"`
	Text    string `json:"text" msgpack:"text"`
	Actor   string `json:"actor,omitempty" msgpack:"actor,omitempty"`
	Time    int64  `json:"time" msgpack:"time"` // Unix ms
	Doc     string `json:"doc" msgpack:"doc"`
	// Version and Label are the article version the request was made
	// against; Scope the part of it.
	Version objstore.ID `json:"version" msgpack:"version"`
	Label   string      `json:"label" msgpack:"label"`
	Scope   Scope       `json:"scope" msgpack:"scope"`
	Run     string      `json:"run,omitempty" msgpack:"run,omitempty"`
	// Personalization is what the user's request chose.
	Personalization *Personalization `json:"personalization,omitempty" msgpack:"pers,omitempty"`
	// Suggestion is the assistant turn's suggestion ("" for no change).
	Suggestion string `json:"suggestion,omitempty" msgpack:"sugg,omitempty"`
}

// MessagePreview is a message in a listing: its text and the original
// text it was about, both bounded.
type MessagePreview struct {
	Message
	// TextTruncated says Text was cut to PreviewChars.
	TextTruncated bool `json:"textTruncated,omitempty"`
	// Source previews the article text in the message's scope at its
	// version (see MessageSource).
	Source SourcePreview `json:"source"`
	// Status is the suggestion's status now (assistant turns with one).
	Status SuggestionStatus `json:"status,omitempty"`
}

// SourcePreview is the start of a message's original text, or the code
// of the error that kept it from being rebuilt.
type SourcePreview struct {
	Text      string `json:"text,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Error     string `json:"error,omitempty"` // history_source_corrupt
}

// MessageSource is a message with the full original text it was about,
// rebuilt from the immutable version it recorded.
type MessageSource struct {
	Message Message `json:"message"`
	// Text is the plain text in the message's scope at its version: the
	// selected text, the block, the section or the whole article.
	Text string `json:"text"`
	// Blocks are the blocks in scope at that version.
	Blocks []flowdoc.Block `json:"blocks"`
}

// Listing bounds.
const (
	PreviewChars    = 200 // code points of a preview's text and source
	maxListMessages = 100
	maxListSessions = 100
	maxInstruction  = 8000 // code points of a request's instruction
	maxTitle        = 80
)

// clip cuts s to n code points; it reports whether it cut.
func clipRunes(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k], true
		}
		i++
	}
	return s, false
}

func (s *Service) loadSession(r kv.Reader, id string) (Session, error) {
	var ss Session
	if !validID(id) {
		return ss, errs.E(errs.NotFound, "session %q not found", id)
	}
	ok, err := kv.GetRecord(r, sessionKey(id), &ss)
	if err != nil {
		return ss, err
	}
	if !ok {
		return ss, errs.E(errs.NotFound, "session %q not found", id)
	}
	return ss, nil
}

// ownSession loads session id for a: another user's session is not found,
// in the same words as a missing one.
func (s *Service) ownSession(r kv.Reader, a Actor, id string) (Session, error) {
	ss, err := s.loadSession(r, id)
	if err == nil && ss.CreatorID != a.UserID {
		return Session{}, errs.E(errs.NotFound, "session %q not found", id)
	}
	return ss, err
}

// Session returns a's session id. Another user's session is not found,
// in the same words as a missing one (the transport then checks that the
// caller still reaches the session's document).
func (s *Service) Session(ctx context.Context, a Actor, id string) (Session, error) {
	if err := a.identified(); err != nil {
		return Session{}, err
	}
	if err := ctx.Err(); err != nil {
		return Session{}, err
	}
	return s.ownSession(s.db, a, id)
}

// putSession writes ss (updated at now) into b, moving its entry in the
// document's recency index.
func putSession(b *kv.Batch, old *Session, ss Session) error {
	if old != nil {
		if err := b.Delete(sessionDocKey(old.Doc, old.CreatorID, old.Updated, old.ID)); err != nil {
			return err
		}
	}
	if err := b.Set(sessionDocKey(ss.Doc, ss.CreatorID, ss.Updated, ss.ID), nil); err != nil {
		return err
	}
	return kv.SetRecord(b, sessionKey(ss.ID), ss)
}

// latestSession returns user's most recently updated session on doc.
func (s *Service) latestSession(r kv.Reader, doc, user string) (Session, bool, error) {
	p := sessionDocPrefix(doc, user)
	it, err := r.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return Session{}, false, err
	}
	defer it.Close()
	if !it.Last() {
		return Session{}, false, it.Error()
	}
	ss, err := s.loadSession(r, lastAfterZero(it.Key()))
	return ss, err == nil, err
}

// currentSession returns user's current session on doc: the one the
// pointer names (set by StartSession, by SwitchSession and when a request
// creates the first one), never moved by a run finishing in another
// session. A store written before the pointer existed, or a pointer whose
// session is gone, falls back to the most recently updated session.
func (s *Service) currentSession(r kv.Reader, doc, user string) (Session, bool, error) {
	id, err := kv.Get(r, sessionCurKey(doc, user))
	switch {
	case err == nil:
		ss, err := s.loadSession(r, string(id))
		if err == nil && ss.Doc == doc && ss.CreatorID == user {
			return ss, true, nil
		}
		if err != nil && !errors.Is(err, errs.NotFound) {
			return Session{}, false, err
		}
	case !errors.Is(err, kv.ErrNotFound):
		return Session{}, false, err
	}
	return s.latestSession(r, doc, user)
}

// checkDoc answers not_found for a document that does not exist.
func (s *Service) checkDoc(ctx context.Context, doc string) error {
	if !repo.ValidDocID(doc) {
		return errs.E(errs.NotFound, "document %q not found", doc)
	}
	_, err := s.repo.GetDoc(ctx, doc)
	return repoErr(err)
}

// CurrentSession returns the session the article resumes for a: a's
// current one on it (currentSession), or a new one when a has none there.
func (s *Service) CurrentSession(ctx context.Context, a Actor, doc string) (Session, error) {
	if err := a.identified(); err != nil {
		return Session{}, err
	}
	if err := s.checkDoc(ctx, doc); err != nil {
		return Session{}, err
	}
	if ss, ok, err := s.currentSession(s.db, doc, a.UserID); err != nil || ok {
		return ss, err
	}
	var out Session
	err := s.repo.Locked(ctx, doc, func(*repo.DocTx) error {
		ss, ok, err := s.currentSession(s.db, doc, a.UserID)
		if err != nil || ok {
			out = ss
			return err
		}
		out, err = s.createSession(doc, a, "")
		return err
	})
	return out, repoErr(err)
}

// createSession writes a new session of a's; the caller holds the
// document lock.
func (s *Service) createSession(doc string, a Actor, title string) (Session, error) {
	now := s.now().UnixMilli()
	if last, ok, err := s.latestSession(s.db, doc, a.UserID); err != nil {
		return Session{}, err
	} else if ok && now <= last.Updated {
		now = last.Updated + 1 // the new session is the most recent
	}
	ss := Session{ID: newID("c"), Doc: doc, Title: title, Creator: a.User, CreatorID: a.UserID, Created: now, Updated: now}
	b := s.db.NewBatch()
	defer b.Close()
	if err := putSession(b, nil, ss); err != nil {
		return Session{}, err
	}
	if err := b.Set(sessionCurKey(doc, a.UserID), []byte(ss.ID)); err != nil {
		return Session{}, err
	}
	return ss, s.db.Apply(b, kv.Sync)
}

// StartSession starts a new session of a's on the article; it becomes the
// one the article resumes for a.
func (s *Service) StartSession(ctx context.Context, a Actor, doc, title string) (Session, error) {
	if err := a.identified(); err != nil {
		return Session{}, err
	}
	if err := s.checkDoc(ctx, doc); err != nil {
		return Session{}, err
	}
	title = strings.TrimSpace(title)
	if utf8.RuneCountInString(title) > maxTitle || !utf8.ValidString(title) {
		return Session{}, errs.E(errs.Invalid, "session title must be at most %d characters of UTF-8", maxTitle)
	}
	var out Session
	err := s.repo.Locked(ctx, doc, func(*repo.DocTx) error {
		var err error
		out, err = s.createSession(doc, a, title)
		return err
	})
	return out, repoErr(err)
}

// Sessions lists a's sessions on the article, most recently updated first
// (at most 100).
func (s *Service) Sessions(ctx context.Context, a Actor, doc string) ([]Session, error) {
	if err := a.identified(); err != nil {
		return nil, err
	}
	if err := s.checkDoc(ctx, doc); err != nil {
		return nil, err
	}
	p := sessionDocPrefix(doc, a.UserID)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	cur, _, err := s.currentSession(s.db, doc, a.UserID)
	if err != nil {
		return nil, err
	}
	var out []Session
	for it.Last(); it.Valid() && len(out) < maxListSessions; it.Prev() {
		ss, err := s.loadSession(s.db, lastAfterZero(it.Key()))
		if err != nil {
			return nil, err
		}
		ss.Current = ss.ID == cur.ID
		out = append(out, ss)
	}
	return out, it.Error()
}

// SwitchSession makes a's session id the current one on the article: the
// one a request without a session continues, until the next switch or
// StartSession (a run finishing in another session does not move it).
func (s *Service) SwitchSession(ctx context.Context, a Actor, doc, id string) (Session, error) {
	if err := a.identified(); err != nil {
		return Session{}, err
	}
	if err := s.checkDoc(ctx, doc); err != nil {
		return Session{}, err
	}
	var out Session
	err := s.repo.Locked(ctx, doc, func(*repo.DocTx) error {
		ss, err := s.ownSession(s.db, a, id)
		if err != nil {
			return err
		}
		if ss.Doc != doc {
			return errs.E(errs.NotFound, "session %q not found on document %s", id, doc)
		}
		cur, _, err := s.currentSession(s.db, doc, a.UserID)
		if err != nil {
			return err
		}
		if cur.ID == ss.ID {
			out = ss
			return nil
		}
		last, _, err := s.latestSession(s.db, doc, a.UserID)
		if err != nil {
			return err
		}
		old := ss
		ss.Updated = max(s.now().UnixMilli(), last.Updated+1)
		b := s.db.NewBatch()
		defer b.Close()
		if err := putSession(b, &old, ss); err != nil {
			return err
		}
		if err := b.Set(sessionCurKey(doc, a.UserID), []byte(ss.ID)); err != nil {
			return err
		}
		out = ss
		return s.db.Apply(b, kv.Sync)
	})
	return out, repoErr(err)
}

func (s *Service) loadMessage(r kv.Reader, session string, seq uint64) (Message, error) {
	var m Message
	ok, err := kv.GetRecord(r, messageKey(session, seq), &m)
	if err != nil {
		return m, err
	}
	if !ok {
		return m, errs.E(errs.NotFound, "message %d of session %s not found", seq, session)
	}
	return m, nil
}

// Messages lists messages of a's session with seq > after, oldest first, at
// most limit (1..100; 0 means 50), each with a bounded preview of its text
// and of the original text it was about. A message whose original cannot
// be rebuilt says so in Source.Error (history_source_corrupt); the
// listing itself does not fail for it.
func (s *Service) Messages(ctx context.Context, a Actor, session string, after uint64, limit int) ([]MessagePreview, error) {
	if err := a.identified(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, maxListMessages)
	ss, err := s.ownSession(s.db, a, session)
	if err != nil {
		return nil, err
	}
	p := messagePrefix(session)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: messageKey(session, after+1), UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	bodies := map[string]flowdoc.Document{} // per label, within this call
	var out []MessagePreview
	for it.First(); it.Valid() && len(out) < limit; it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var m Message
		if err := kv.Unmarshal(it.Value(), &m); err != nil {
			return nil, errs.E(errs.Corrupt, "assistant: decode message %d of session %s: %w", kv.ParseUint64(it.Key()), session, err)
		}
		pv := MessagePreview{Message: m}
		pv.Text, pv.TextTruncated = clipRunes(m.Text, PreviewChars)
		src, err := s.rebuild(ctx, ss.Doc, m, bodies)
		if err != nil {
			pv.Source.Error = errs.CodeOf(err)
		} else {
			pv.Source.Text, pv.Source.Truncated = clipRunes(src.Text, PreviewChars)
		}
		if m.Suggestion != "" {
			if sg, err := s.loadSuggestion(s.db, m.Suggestion); err == nil {
				pv.Status = sg.Status
			}
		}
		out = append(out, pv)
	}
	return out, it.Error()
}

// MessageSource returns message seq of a's session in full, with the full
// original text it was about, rebuilt from the immutable version the
// message recorded and its scope resolved against that version. A broken
// reference is history_source_corrupt (details in the log), never an
// empty text.
func (s *Service) MessageSource(ctx context.Context, a Actor, session string, seq uint64) (MessageSource, error) {
	if err := a.identified(); err != nil {
		return MessageSource{}, err
	}
	ss, err := s.ownSession(s.db, a, session)
	if err != nil {
		return MessageSource{}, err
	}
	m, err := s.loadMessage(s.db, session, seq)
	if err != nil {
		return MessageSource{}, err
	}
	return s.rebuild(ctx, ss.Doc, m, nil)
}

// rebuild materializes the version m recorded and resolves m's scope in
// it. cache (may be nil) keeps bodies by label within one call.
func (s *Service) rebuild(ctx context.Context, doc string, m Message, cache map[string]flowdoc.Document) (MessageSource, error) {
	corrupt := func(why string, err error) (MessageSource, error) {
		// Redacted: ids, labels and the cause's class, never text.
		attrs := []any{"doc", doc, "session", m.Session, "seq", m.Seq, "label", m.Label,
			"version", m.Version.Short(), "scope", m.Scope.Kind, "why", why}
		if err != nil {
			attrs = append(attrs, "kind", errs.KindOf(err).String())
		}
		s.log.Error("assistant: history source corrupt", attrs...)
		return MessageSource{}, errs.C(errs.Corrupt, CodeHistoryCorrupt,
			"the original text of message %d of session %s cannot be rebuilt (%s); run folio fsck", m.Seq, m.Session, why)
	}
	if m.Doc != doc || m.Label == "" || m.Version.IsZero() {
		return corrupt("the message names no version of its document", nil)
	}
	body, ok := cache[m.Label]
	if !ok {
		snap, err := s.repo.Show(ctx, doc, m.Label)
		if err != nil {
			if ctx.Err() != nil {
				return MessageSource{}, ctx.Err()
			}
			return corrupt("its version "+m.Label+" cannot be read", err)
		}
		if snap.Info.Hash != m.Version {
			return corrupt("label "+m.Label+" names another version than the one recorded", nil)
		}
		body = snap.Body
		if cache != nil {
			cache[m.Label] = body
		}
	}
	r, err := resolveScope(body, m.Scope)
	if err != nil {
		return corrupt("its scope does not resolve in version "+m.Label, err)
	}
	return MessageSource{Message: m, Text: r.text, Blocks: r.blocks}, nil
}

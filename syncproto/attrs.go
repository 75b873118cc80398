package syncproto

import (
	"context"
	"time"

	"github.com/foliodev/folio/internal/errs"
)

// The attributes assistant over the socket: attrs.suggest {doc} is
// answered by attrs.suggestion with the suggested summary, slug, category
// and tags of the document's draft, or by an error with the assistant's
// codes (attributes_disabled, private_content_blocked, the attributes
// quota's attributes_rate_limited, …). Nothing is saved: the editor
// adopts a suggestion with an ordinary draft.save of its attributes.
const (
	TypeAttrsSuggest    = "attrs.suggest"
	TypeAttrsSuggestion = "attrs.suggestion"
)

// AttrsSuggest asks for attribute suggestions for document Doc.
type AttrsSuggest struct {
	Envelope
	Doc string `json:"doc"`
}

// AttrsSuggestion answers AttrsSuggest.
type AttrsSuggestion struct {
	Envelope
	Doc      string   `json:"doc"`
	Title    string   `json:"title,omitempty"` // a proposed title; absent: none proposed
	Summary  string   `json:"summary"`
	Slug     string   `json:"slug"`
	Category string   `json:"category,omitempty"`
	Tags     []string `json:"tags"`
	Provider string   `json:"provider"`
	Model    string   `json:"model"`
}

// Attrs is the attributes assistant as the sync server needs it. The
// server has checked the caller's access to doc.
type Attrs interface {
	SuggestAttrs(ctx context.Context, p Principal, doc string) (AttrsSuggestion, error)
}

// attrsTimeout bounds one suggestion (a remote model may take a while).
const attrsTimeout = 2 * time.Minute

func (c *conn) suggestAttrs(m *AttrsSuggest) {
	if c.principal().ReadOnly {
		// As over HTTP (POST …/attrs/suggest): asking a model spends the
		// author's quota, which a backup token may not.
		c.replyError(m.ID, CodeReadOnly, "a backup token may only read; use an author's token to ask the attributes assistant")
		return
	}
	if !c.checkDoc(m.ID, m.Doc) {
		return
	}
	if c.srv.cfg.Attrs == nil {
		c.replyError(m.ID, Code("attributes_disabled"), "the attributes assistant is not available on this server")
		return
	}
	ctx, cancel := context.WithTimeout(c.vals, attrsTimeout)
	res, err := c.srv.cfg.Attrs.SuggestAttrs(ctx, c.principal(), m.Doc)
	cancel()
	if err != nil {
		c.replyError(m.ID, Code(errs.CodeOf(err)), errs.Message(err))
		return
	}
	res.Envelope = Envelope{ID: m.ID}
	res.Doc = m.Doc
	if res.Tags == nil {
		res.Tags = []string{}
	}
	c.send(&res)
}

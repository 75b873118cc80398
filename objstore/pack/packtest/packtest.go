package packtest

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

// Builder adds checkpoints to documents. Writes accumulate in one batch
// until Flush, which commits them with the head moves (one refs.Update).
// A Builder is not safe for concurrent use.
type Builder struct {
	db   *kv.DB
	objs *objstore.Store
	refs *refs.Store
	rng  *rand.Rand

	batch *kv.Batch
	ups   map[string]*refs.Update
	order []string
	state map[string]*docState

	// Bodies, when not nil, receives the body of every version written.
	Bodies map[objstore.ID]flowdoc.Document
	// Written counts the distinct new objects written, by kind.
	Written map[objstore.Kind]int
	// RawBytes is the canonical size of the objects written.
	RawBytes int64
	written  map[objstore.ID]bool
}

type docState struct {
	head  objstore.ID
	v     *objstore.Version
	body  flowdoc.Document
	attrs flowdoc.Attributes
	next  int // next block number
}

// New returns a Builder writing to db through objs and rs.
func New(db *kv.DB, objs *objstore.Store, rs *refs.Store, seed int64) *Builder {
	return &Builder{db: db, objs: objs, refs: rs, rng: rand.New(rand.NewSource(seed)),
		ups: map[string]*refs.Update{}, state: map[string]*docState{},
		Written: map[objstore.Kind]int{}, written: map[objstore.ID]bool{}}
}

// Build writes docs documents ("doc-0001"…) with versions versions each,
// flushing every 20 documents.
func (b *Builder) Build(docs, versions int) error {
	for d := 1; d <= docs; d++ {
		doc := fmt.Sprintf("doc-%04d", d)
		for v := 0; v < versions; v++ {
			if _, err := b.Checkpoint(doc); err != nil {
				return err
			}
		}
		if d%20 == 0 {
			if err := b.Flush(); err != nil {
				return err
			}
		}
	}
	return b.Flush()
}

var words = strings.Fields(`the a of and to in is for on with as by at from this that it be are was
	writing draft version block history restore backup editor article review paragraph sentence
	garden river morning coffee winter summer light quiet window letter story travel mountain city
	notes idea reason change simple careful honest small large early later always never often
	because while after before during under over between through across around without within
	数据 文章 历史 草稿 版本 café naïve résumé 🙂 déjà vu`)

func (b *Builder) sentence() string {
	n := 6 + b.rng.Intn(14)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[b.rng.Intn(len(words))]
	}
	s := strings.Join(ws, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func (b *Builder) paragraph() string {
	n := 2 + b.rng.Intn(5)
	ss := make([]string, n)
	for i := range ss {
		ss[i] = b.sentence()
	}
	return strings.Join(ss, " ")
}

func (b *Builder) newBlock(st *docState) flowdoc.Block {
	st.next++
	id := fmt.Sprintf("b%d", st.next)
	switch r := b.rng.Intn(10); {
	case r == 0:
		return flowdoc.Block{ID: id, Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 2}, RichText: []flowdoc.Run{{Text: b.sentence()}}}
	case r == 1:
		return flowdoc.Block{ID: id, Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Language: "go", Text: "func main() {\n\tprintln(\"" + b.sentence() + "\")\n}\n"}}
	default:
		return flowdoc.Block{ID: id, Type: flowdoc.Paragraph, RichText: []flowdoc.Run{
			{Text: b.paragraph() + " "}, {Text: b.sentence(), Marks: []flowdoc.Mark{flowdoc.Bold}}}}
	}
}

func (b *Builder) docState(doc string) (*docState, error) {
	if st, ok := b.state[doc]; ok {
		return st, nil
	}
	st := &docState{}
	head, err := b.refs.Get("docs/" + doc + "/head")
	if err == nil {
		v, err := b.objs.GetVersion(head)
		if err != nil {
			return nil, err
		}
		st.head, st.v, st.attrs = head, v, v.Attrs
		for _, be := range v.Blocks {
			data, err := b.objs.GetContent(be.Content)
			if err != nil {
				return nil, err
			}
			blk, err := objstore.DecodeContent(data)
			if err != nil {
				return nil, err
			}
			blk.ID = be.ID
			st.body.Blocks = append(st.body.Blocks, blk)
			var n int
			if _, err := fmt.Sscanf(be.ID, "b%d", &n); err == nil && n > st.next {
				st.next = n
			}
		}
	}
	st.body.SchemaVersion = flowdoc.SchemaVersion
	b.state[doc] = st
	return st, nil
}

// Checkpoint seals one new version of doc: the first creates the document
// with 12–24 blocks, later ones modify one or two blocks, sometimes add or
// delete one. It returns the new version's id.
func (b *Builder) Checkpoint(doc string) (objstore.ID, error) {
	st, err := b.docState(doc)
	if err != nil {
		return objstore.ID{}, err
	}
	before := map[string]objstore.ID{}
	if st.v != nil {
		for _, be := range st.v.Blocks {
			before[be.ID] = be.Content
		}
	}
	body := st.body.Clone()
	kind := objstore.KindCheckpoint
	if st.v == nil {
		kind = objstore.KindCreate
		n := 12 + b.rng.Intn(13)
		for i := 0; i < n; i++ {
			body.Blocks = append(body.Blocks, b.newBlock(st))
		}
		st.attrs = flowdoc.Attributes{Title: "Notes on " + b.sentence(), Slug: strings.ReplaceAll(doc, "doc-", "notes-"),
			Category: "essays", Tags: []string{"folio", words[b.rng.Intn(len(words))]}, Status: "draft", Visibility: "public"}
	} else {
		for n := 1 + b.rng.Intn(2); n > 0; n-- {
			i := b.rng.Intn(len(body.Blocks))
			blk := &body.Blocks[i]
			if blk.Type == flowdoc.Code {
				blk.Attrs.Text += "// " + b.sentence() + "\n"
			} else {
				blk.RichText = append(blk.RichText[:len(blk.RichText):len(blk.RichText)], flowdoc.Run{Text: " " + b.sentence()})
			}
		}
		switch r := b.rng.Intn(10); {
		case r == 0:
			i := b.rng.Intn(len(body.Blocks) + 1)
			nb := b.newBlock(st)
			body.Blocks = append(body.Blocks[:i], append([]flowdoc.Block{nb}, body.Blocks[i:]...)...)
		case r == 1 && len(body.Blocks) > 4:
			i := b.rng.Intn(len(body.Blocks))
			body.Blocks = append(body.Blocks[:i], body.Blocks[i+1:]...)
		}
	}
	body = flowdoc.Sanitize(body)
	if b.batch == nil {
		b.batch = b.db.NewBatch()
	}
	v := &objstore.Version{Doc: doc, Kind: kind, Reason: objstore.ReasonIdle, Attrs: st.attrs,
		Fingerprint: flowdoc.FingerprintOf(body), Author: "ada", Message: ""}
	txn := &objstore.Txn{Doc: doc, Actor: "ada", Kind: kind, Reason: objstore.ReasonIdle}
	if st.v != nil {
		v.Seq = st.v.Seq + 1
		v.Label = fmt.Sprintf("v1.r%d", v.Seq-1)
		v.Parents = []objstore.ID{st.head}
		v.Time = st.v.Time + 60_000 + int64(b.rng.Intn(600_000))
		txn.BaseVersion, txn.BaseFingerprint = st.head, st.v.Fingerprint
	} else {
		v.Seq, v.Label = 1, "v1.r0"
		var n int
		fmt.Sscanf(doc, "doc-%d", &n)
		v.Time = 1_767_225_600_000 + int64(n)*3_600_000 // 2026-01-01 plus an hour per document
		v.Message = "created"
	}
	txn.Time = v.Time
	after := map[string]bool{}
	for _, blk := range body.Blocks {
		data := flowdoc.EncodeContent(blk)
		id, err := b.put(objstore.KindContent, data)
		if err != nil {
			return objstore.ID{}, err
		}
		v.Blocks = append(v.Blocks, objstore.BlockEntry{ID: blk.ID, Content: id})
		after[blk.ID] = true
		old, had := before[blk.ID]
		switch {
		case !had:
			txn.Events = append(txn.Events, objstore.TxnEvent{Op: objstore.EventAdd, BlockID: blk.ID, After: id})
		case old != id:
			txn.Events = append(txn.Events, objstore.TxnEvent{Op: objstore.EventModify, BlockID: blk.ID, Before: old, After: id})
		}
	}
	if st.v != nil {
		for _, be := range st.v.Blocks {
			if !after[be.ID] {
				txn.Events = append(txn.Events, objstore.TxnEvent{Op: objstore.EventDelete, BlockID: be.ID, Before: be.Content})
			}
		}
	}
	tdata, _, err := txn.Encode()
	if err != nil {
		return objstore.ID{}, err
	}
	if v.Txn, err = b.put(objstore.KindTxn, tdata); err != nil {
		return objstore.ID{}, err
	}
	vdata, _, err := v.Encode()
	if err != nil {
		return objstore.ID{}, err
	}
	id, err := b.put(objstore.KindVersion, vdata)
	if err != nil {
		return objstore.ID{}, err
	}
	name := "docs/" + doc + "/head"
	if u, ok := b.ups[name]; ok {
		u.New = id
	} else {
		b.ups[name] = &refs.Update{Name: name, Old: st.head, New: id}
		b.order = append(b.order, name)
	}
	st.head, st.v, st.body = id, v, body
	if b.Bodies != nil {
		b.Bodies[id] = body.Clone()
	}
	return id, nil
}

func (b *Builder) put(k objstore.Kind, data []byte) (objstore.ID, error) {
	id, err := b.objs.Put(b.batch, k, data)
	if err != nil {
		return id, err
	}
	if !b.written[id] {
		has, err := b.objs.Has(id)
		if err != nil {
			return id, err
		}
		if !has {
			b.Written[k]++
			b.RawBytes += int64(len(data))
		}
		b.written[id] = true
	}
	return id, nil
}

// Flush commits the pending objects and head moves in one synced batch.
func (b *Builder) Flush() error {
	if b.batch == nil {
		return nil
	}
	ups := make([]refs.Update, 0, len(b.order))
	for _, n := range b.order {
		ups = append(ups, *b.ups[n])
	}
	batch := b.batch
	b.batch, b.ups, b.order = nil, map[string]*refs.Update{}, nil
	if err := b.refs.Update(batch, ups, "checkpoint"); err != nil {
		return fmt.Errorf("packtest: flush: %w", err)
	}
	return nil
}

package syncproto_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

// The model test: 2-16 editors, each a client.Editor (the client
// algorithm of docs/protocol.md) on its own connection over a real
// socket, in both codecs, edit one document at random (appending a
// token to a block, often the same few blocks; inserting, moving and
// deleting blocks), with store reads delayed at random and connections
// cut at random, mid-save included. Afterwards:
//   - every seq of the draft was acknowledged to exactly one save, and
//     applying the acknowledged saves in seq order to the first draft
//     gives the final draft: nothing unacknowledged landed, nothing
//     acknowledged was lost;
//   - every acknowledged upsert of an existing block kept all of that
//     block's tokens: no save was built on a stale copy of its block
//     (the lost update of an editor that missed an event);
//   - every editor's copy equals the final draft.
//
// The typing runs (typing=1) do the same with merging editors
// (EditorOptions.Merge) that mostly type into the same two paragraphs:
// a unique token inserted at a random word, or a token deleted. Then,
// besides the above (with the merged content of an ack standing for
// what the save sent), every token an acknowledged save carried is in
// the final draft unless an editor deleted it on purpose (or its block
// is gone).
//
// FOLIO_MODEL_SEED replays a run; FOLIO_MODEL_RUNS and FOLIO_MODEL_SAVES
// make it larger (defaults: 4 runs of 600 saves, 2 under -short; typing
// runs: FOLIO_MODEL_TYPING_RUNS, default 2, 1 under -short);
// FOLIO_MODEL_DEBUG=1 traces every event, flush and acknowledged save.
func TestModelEditors(t *testing.T) {
	runs, saves := envInt("FOLIO_MODEL_RUNS", 4), envInt("FOLIO_MODEL_SAVES", 600)
	typingRuns := envInt("FOLIO_MODEL_TYPING_RUNS", 2)
	if testing.Short() {
		runs, typingRuns = min(runs, 2), min(typingRuns, 1)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FOLIO_MODEL_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("FOLIO_MODEL_SEED: %v", err)
		}
		seed, runs = v, 1
		typingRuns = 1
	}
	for r := range runs + typingRuns {
		runSeed := seed + uint64(r%max(runs, typingRuns))
		typing := r >= runs
		t.Run(fmt.Sprint("typing=", typing, ",seed=", runSeed), func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("replay with FOLIO_MODEL_SEED=%d FOLIO_MODEL_SAVES=%d", runSeed, saves)
				}
			})
			runModel(t, runSeed, saves, typing)
		})
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// ackedSave is one acknowledged save.
type ackedSave struct {
	seq     uint64
	key     string
	changes []syncproto.Change
	base    uint64
	merged  map[string]*flowdoc.Block // the ack's merged blocks: what the server stored for those
}

func tokens(b flowdoc.Block) []string { return strings.Fields(blockText(b)) }

func withTokens(id string, toks []string) flowdoc.Block {
	if len(toks) == 0 {
		return flowdoc.Block{ID: id, Type: flowdoc.Paragraph}
	}
	return para(id, strings.Join(toks, " ")+" ") // each token ends with its space: merged insertions stay apart
}

// unionResolve keeps the server's tokens and adds the local ones it lacks:
// a real merge for blocks that only grow. A block deleted on the server
// stays deleted; a local delete stays.
func unionResolve(id string, server, mine *flowdoc.Block) (*flowdoc.Block, bool) {
	switch {
	case server == nil:
		return nil, false
	case mine == nil:
		return nil, true
	}
	toks := tokens(*server)
	for _, t := range tokens(*mine) {
		if !slices.Contains(toks, t) {
			toks = append(toks, t)
		}
	}
	b := withTokens(id, toks)
	return &b, true
}

func runModel(t *testing.T, seed uint64, saves int, typing bool) {
	runeTokens = typing
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	editors := 2 + rng.IntN(15)
	e := startEnv(t, func(c *syncproto.Config) {
		c.Events = slowEvents{Events: c.Events, max: time.Millisecond}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel) // closes the editors' connections, before the server's Close
	first := flowdoc.Document{SchemaVersion: 1}
	for i := range 8 {
		first.Blocks = append(first.Blocks, para(fmt.Sprintf("b%d", i), ""))
	}
	if err := e.CreateDoc("m", "alice", first); err != nil {
		t.Fatal(err)
	}
	d0, err := e.Repo.Draft(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var acked []ackedSave
	deleted := &sync.Map{} // tokens an editor deleted on purpose (typing runs)
	eds := make([]*client.Editor, editors)
	var wg, done sync.WaitGroup
	quit := make(chan struct{})
	errc := make(chan error, editors)
	for i := range editors {
		proto := codecs[i%2]
		ed := client.NewEditor("m", client.EditorOptions{Resolve: unionResolve, Merge: typing,
			OnAck: func(a *syncproto.Ack, s *syncproto.Save) {
				as := ackedSave{seq: a.Seq, base: s.BaseSeq, key: s.Key, changes: s.Changes}
				for _, b := range a.Merged {
					if as.merged == nil {
						as.merged = map[string]*flowdoc.Block{}
					}
					as.merged[b.ID] = b.Block
				}
				mu.Lock()
				acked = append(acked, as)
				mu.Unlock()
			}})
		eds[i] = ed
		er := rand.New(rand.NewPCG(seed, uint64(i)))
		quota := saves / editors
		if i < saves%editors {
			quota++
		}
		wg.Add(1)
		done.Add(1)
		go func() {
			defer wg.Done()
			var once sync.Once
			finished := func() { once.Do(done.Done) }
			defer finished()
			if err := modelEditor(ctx, e.URL, proto, ed, er, i, quota, finished, quit, typing, deleted); err != nil {
				errc <- fmt.Errorf("editor %d (%s): %w", i, proto, err)
			}
		}()
	}
	done.Wait()
	defer func() {
		close(quit)
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Error(err)
		}
	}()
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}

	d, err := e.Repo.Draft(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	// Every seq was acknowledged to one save (retries answer the same
	// ack). A save that changes nothing is acknowledged with the current
	// seq, so a seq may have more saves: exactly one of them, applied, must
	// make the others change nothing.
	bySeq := map[uint64][]ackedSave{}
	for _, a := range acked {
		dup := false
		for _, p := range bySeq[a.seq] {
			dup = dup || p.key == a.key
		}
		if !dup {
			bySeq[a.seq] = append(bySeq[a.seq], a)
		}
	}
	model := &modelDoc{order: nil, blocks: map[string][]string{}, deleted: deleted}
	for _, b := range d0.Body.Blocks {
		model.order = append(model.order, b.ID)
		model.blocks[b.ID] = tokens(b)
	}
	for seq := d0.Seq + 1; seq <= d.Seq; seq++ {
		cands := bySeq[seq]
		if len(cands) == 0 {
			t.Fatalf("draft seq %d was never acknowledged to a save", seq)
		}
		var next *modelDoc
		var lastErr error
		for i, a := range cands {
			if os.Getenv("FOLIO_MODEL_DEBUG") != "" {
				var ms []string
				for id, b := range a.merged {
					ms = append(ms, fmt.Sprintf("%s=%q", id, blockText(*b)))
				}
				t.Logf("seq %d base %d key %s changes %s merged %v", seq, a.base, a.key, changesString(a.changes), ms)
			}
			m := model.clone()
			if err := m.apply(a.changes, a.merged); err != nil {
				lastErr = fmt.Errorf("acknowledged save seq %d (%s): %v", seq, a.key, err)
				continue
			}
			noop := true
			for j, o := range cands {
				if j != i {
					m2 := m.clone()
					noop = noop && m2.apply(o.changes, o.merged) == nil && docString(m2.doc()) == docString(m.doc())
				}
			}
			if noop {
				next = m
				break
			}
			lastErr = fmt.Errorf("seq %d acknowledged to %d saves that each change the draft", seq, len(cands))
		}
		if next == nil {
			t.Fatal(lastErr)
		}
		model = next
	}
	want := model.doc()
	if got := docString(d.Body); got != docString(want) {
		t.Fatalf("final draft differs from the acknowledged saves applied in order:\n draft %s\n model %s", got, docString(want))
	}
	if len(acked) < saves/2 {
		t.Fatalf("only %d of %d saves acknowledged", len(acked), saves)
	}
	// Every token an acknowledged save carried is in the final draft,
	// unless it was deleted on purpose or its block is gone.
	final := map[string][]string{}
	for _, b := range d.Body.Blocks {
		final[b.ID] = tokens(b)
	}
	merges := 0
	for _, a := range acked {
		if len(a.merged) > 0 {
			merges++
		}
		for _, c := range a.changes {
			if c.Op != "upsert" {
				continue
			}
			b := c.Block
			if m := a.merged[b.ID]; m != nil {
				b = m
			}
			have, ok := final[b.ID]
			if !ok {
				continue
			}
			for _, tok := range tokens(*b) {
				if _, del := deleted.Load(tok); !del && !slices.Contains(have, tok) {
					t.Fatalf("token %s of the save acknowledged at seq %d is not in block %s of the final draft", tok, a.seq, b.ID)
				}
			}
		}
	}
	// Every copy converges on the draft.
	for i, ed := range eds {
		waitUntil(t, fmt.Sprintf("editor %d at seq %d", i, d.Seq), func() bool {
			_, seq := ed.Server()
			return seq >= d.Seq
		})
		if got := exactString(ed.Document()); got != exactString(d.Body) {
			t.Fatalf("editor %d has\n %s\nthe draft is\n %s", i, got, exactString(d.Body))
		}
	}
	t.Logf("%d editors, %d saves acknowledged (%d merged by the server), final seq %d, %d blocks", editors, len(acked), merges, d.Seq, len(d.Body.Blocks))
}

// modelEditor makes quota saves with one editor. Its connection stays
// open until ctx ends, so that the editor keeps following the others.
func modelEditor(ctx context.Context, url, proto string, ed *client.Editor, rng *rand.Rand, who, quota int,
	finished func(), quit <-chan struct{}, typing bool, deleted *sync.Map) error {
	dialOpen := func() (*client.Client, error) {
		on := ed.HandleEvent
		if os.Getenv("FOLIO_MODEL_DEBUG") != "" {
			on = func(ev *syncproto.Event) {
				if ev.Type == syncproto.TypeDraftUpdated {
					var du syncproto.DraftUpdated
					ev.DecodeData(&du)
					_, before := ed.Server()
					ed.HandleEvent(ev)
					_, after := ed.Server()
					var ids []string
					for _, b := range du.Blocks {
						ids = append(ids, b.ID)
					}
					fmt.Fprintf(os.Stderr, "E%d event seq %d blocks %v: copy %d -> %d\n", who, du.Seq, ids, before, after)
					return
				}
				ed.HandleEvent(ev)
			}
		}
		c, err := client.Dial(ctx, url, client.Options{Token: "ta", Subprotocol: proto, OnEvent: on, OnResync: ed.HandleResync})
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	c, err := dialOpen()
	if err != nil {
		return err
	}
	defer func() {
		go func() {
			<-ctx.Done()
			c.CloseNow()
		}()
	}()
	if _, err := ed.Open(ctx, c); err != nil {
		return err
	}
	n := 0
	for done := 0; done < quota; done++ {
		for range 1 + rng.IntN(2) {
			err := ed.Edit(func(d flowdoc.Document) []syncproto.Change {
				if typing && rng.IntN(4) > 0 {
					if ch, ok := randomTyping(d, rng, who, &n, deleted); ok {
						return []syncproto.Change{ch}
					}
				}
				if ch, ok := randomChange(d, rng, who, &n); ok {
					return []syncproto.Change{ch}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("local change: %w", err)
			}
		}
		if rng.IntN(40) == 0 {
			// Cut the connection, sometimes while a save is in flight.
			flushed := make(chan error, 1)
			go func() { flushed <- ed.Flush(ctx) }()
			time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
			c.CloseNow()
			<-flushed
			if c, err = dialOpen(); err != nil {
				return err
			}
			if err := ed.Reopen(ctx, c); err != nil {
				return fmt.Errorf("reopen: %w", err)
			}
		}
		if ed.NeedsReopen() {
			if err := ed.Reopen(ctx, c); err != nil {
				return fmt.Errorf("reopen after resync: %w", err)
			}
		}
		if err := flushAll(ctx, ed, who); err != nil {
			return err
		}
	}
	if err := flushAll(ctx, ed, who); err != nil {
		return err
	}
	// Follow the others until the run ends, reopening after a resync.
	finished()
	for {
		select {
		case <-quit:
			return nil
		case <-time.After(5 * time.Millisecond):
		}
		if ed.NeedsReopen() {
			if err := ed.Reopen(ctx, c); err != nil {
				return fmt.Errorf("reopen after resync: %w", err)
			}
		}
	}
}

// flushAll flushes until nothing is pending, resolving conflicts.
func flushAll(ctx context.Context, ed *client.Editor, who int) error {
	for try := 0; ed.Pending(); try++ {
		if try == 50 {
			return errors.New("changes still pending after 50 flushes")
		}
		err := ed.Flush(ctx)
		if os.Getenv("FOLIO_MODEL_DEBUG") != "" {
			_, seq := ed.Server()
			fmt.Fprintf(os.Stderr, "F%d flush: %v; copy at %d\n", who, err, seq)
		}
		var ce *folio.ConflictError
		if err != nil && !errors.As(err, &ce) {
			return err
		}
	}
	return nil
}

// randomChange picks a change that applies to doc: mostly a token
// appended to a block (half of those on the first three, so that editors
// contend), sometimes an insert, move or delete.
func randomChange(doc flowdoc.Document, rng *rand.Rand, who int, n *int) (syncproto.Change, bool) {
	bs := doc.Blocks
	if len(bs) == 0 {
		*n++
		b := withTokens(fmt.Sprintf("e%dn%d", who, *n), []string{tokenName(who, *n)})
		return syncproto.Change{Op: "upsert", Block: &b}, true
	}
	pick := func() flowdoc.Block {
		if rng.IntN(2) == 0 {
			return bs[rng.IntN(min(3, len(bs)))]
		}
		return bs[rng.IntN(len(bs))]
	}
	anchor := func() *string {
		s := ""
		if rng.IntN(4) > 0 {
			s = bs[rng.IntN(len(bs))].ID
		}
		return &s
	}
	*n++
	switch r := rng.IntN(20); {
	case r < 13:
		b := pick()
		nb := withTokens(b.ID, append(tokens(b), tokenName(who, *n)))
		return syncproto.Change{Op: "upsert", Block: &nb}, true
	case r < 16:
		b := withTokens(fmt.Sprintf("e%dn%d", who, *n), []string{tokenName(who, *n)})
		var after *string
		if rng.IntN(3) > 0 {
			after = anchor()
		}
		return syncproto.Change{Op: "upsert", Block: &b, After: after}, true
	case r < 18:
		b := pick()
		after := anchor()
		if *after == b.ID {
			return syncproto.Change{}, false
		}
		return syncproto.Change{Op: "move", BlockID: b.ID, After: after}, true
	default:
		if len(bs) < 4 {
			return syncproto.Change{}, false
		}
		return syncproto.Change{Op: "delete", BlockID: bs[rng.IntN(len(bs))].ID}, true
	}
}

// runeTokens makes tokens single code points (the typing runs): a
// character merge aligns text made of distinct characters in one way
// only, so a token is whole or gone. (Tokens such as "t1.5" share
// characters; a merge keeps every character of them, but two insertions
// next to equal text may interleave, which no token check can tell from
// a loss.)
var runeTokens bool

// tokenName names editor who's n-th token.
func tokenName(who, n int) string {
	if !runeTokens {
		return fmt.Sprintf("t%d.%d", who, n)
	}
	i := who*2048 + n%2048
	if n >= 2048 {
		panic("model: more than 2048 tokens an editor; lower FOLIO_MODEL_SAVES for typing runs")
	}
	return string(rune(0x20000 + i)) // CJK Extension B: 42,720 letters
}

// randomTyping types into one of the first two blocks: a unique token
// inserted before a random token (or at the end), or, one time in five, a
// token deleted (noted in deleted).
func randomTyping(doc flowdoc.Document, rng *rand.Rand, who int, n *int, deleted *sync.Map) (syncproto.Change, bool) {
	if len(doc.Blocks) == 0 {
		return syncproto.Change{}, false
	}
	b := doc.Blocks[rng.IntN(min(2, len(doc.Blocks)))]
	toks := tokens(b)
	if len(toks) > 2 && rng.IntN(5) == 0 {
		i := rng.IntN(len(toks))
		deleted.Store(toks[i], true)
		nb := withTokens(b.ID, slices.Delete(slices.Clone(toks), i, i+1))
		return syncproto.Change{Op: "upsert", Block: &nb}, true
	}
	*n++
	nb := withTokens(b.ID, slices.Insert(slices.Clone(toks), rng.IntN(len(toks)+1), tokenName(who, *n)))
	return syncproto.Change{Op: "upsert", Block: &nb}, true
}

// modelDoc is the document the acknowledged saves make, applied with the
// semantics of docs/protocol.md, independently of the client's code.
type modelDoc struct {
	order   []string
	blocks  map[string][]string
	deleted *sync.Map // tokens deleted on purpose: they may go
}

// apply applies the changes of an acknowledged save; merged holds the
// blocks the server merged (their content is what it stored).
func (m *modelDoc) apply(changes []syncproto.Change, merged map[string]*flowdoc.Block) error {
	at := func(after *string) (int, error) {
		if after == nil {
			return len(m.order), nil
		}
		if *after == "" {
			return 0, nil
		}
		i := slices.Index(m.order, *after)
		if i < 0 {
			return 0, fmt.Errorf("anchor %q is not in the document", *after)
		}
		return i + 1, nil
	}
	for _, c := range changes {
		switch c.Op {
		case "upsert":
			id := c.Block.ID
			toks := tokens(*c.Block)
			if mb := merged[id]; mb != nil {
				toks = tokens(*mb)
			}
			i := slices.Index(m.order, id)
			if i >= 0 {
				for _, t := range m.blocks[id] {
					if _, del := m.deleted.Load(t); !del && !slices.Contains(toks, t) {
						return fmt.Errorf("block %s: token %s of an earlier acknowledged save is gone: the save was built on a stale copy", id, t)
					}
				}
			}
			m.blocks[id] = toks
			if i < 0 || c.After != nil {
				if i >= 0 {
					m.order = slices.Delete(m.order, i, i+1)
				}
				j, err := at(c.After)
				if err != nil {
					return err
				}
				m.order = slices.Insert(m.order, j, id)
			}
		case "delete":
			if i := slices.Index(m.order, c.BlockID); i >= 0 {
				m.order = slices.Delete(m.order, i, i+1)
			}
			delete(m.blocks, c.BlockID)
		case "move":
			i := slices.Index(m.order, c.BlockID)
			if i < 0 {
				return fmt.Errorf("move of %q, not in the document", c.BlockID)
			}
			m.order = slices.Delete(m.order, i, i+1)
			j, err := at(c.After)
			if err != nil {
				return err
			}
			m.order = slices.Insert(m.order, j, c.BlockID)
		}
	}
	return nil
}

func (m *modelDoc) clone() *modelDoc {
	n := &modelDoc{order: slices.Clone(m.order), blocks: make(map[string][]string, len(m.blocks)), deleted: m.deleted}
	for k, v := range m.blocks {
		n.blocks[k] = v
	}
	return n
}

func (m *modelDoc) doc() flowdoc.Document {
	d := flowdoc.Document{SchemaVersion: 1}
	for _, id := range m.order {
		d.Blocks = append(d.Blocks, withTokens(id, m.blocks[id]))
	}
	return d
}

// docString is a document's block ids and tokens.
func docString(d flowdoc.Document) string {
	var sb strings.Builder
	for _, b := range d.Blocks {
		fmt.Fprintf(&sb, "[%s: %s]", b.ID, strings.Join(tokens(b), " "))
	}
	return sb.String()
}

// exactString is a document's block ids and exact texts.
func exactString(d flowdoc.Document) string {
	var sb strings.Builder
	for _, b := range d.Blocks {
		fmt.Fprintf(&sb, "[%s: %q]", b.ID, blockText(b))
	}
	return sb.String()
}

func changesString(cs []syncproto.Change) string {
	var sb strings.Builder
	for _, c := range cs {
		switch c.Op {
		case "upsert":
			after := "<end>"
			if c.After != nil {
				after = *c.After
			}
			fmt.Fprintf(&sb, "{upsert %s %q after %s}", c.Block.ID, blockText(*c.Block), after)
		default:
			after := ""
			if c.After != nil {
				after = *c.After
			}
			fmt.Fprintf(&sb, "{%s %s %s}", c.Op, c.BlockID, after)
		}
	}
	return sb.String()
}

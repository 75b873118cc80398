package pack

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/mediatype"
	"github.com/foliodev/folio/objstore"
)

// GitOptions choose what ExportGit writes.
type GitOptions struct {
	// Docs limits the export to these documents; empty means all.
	Docs []string
	// Branch is the ref the commits go to; default "refs/heads/main". A
	// name without "refs/" is taken as a branch under refs/heads/.
	Branch string
}

// GitStats describe a git export.
type GitStats struct {
	Docs    int
	Commits int
	Paths   map[string]string // document id -> path without extension ("docs/<slug-or-id>")
}

// Materialize returns the body of version v: its blocks, in order, decoded
// from their content objects, each with its id.
func Materialize(objs *objstore.Store, v *objstore.Version) (flowdoc.Document, error) {
	return materialize(objs, v, nil)
}

// blockCache holds decoded block contents by id; successive versions of a
// document share most of their blocks. Cached blocks are never modified.
type blockCache map[objstore.ID]flowdoc.Block

const blockCacheMax = 1 << 14

func materialize(objs *objstore.Store, v *objstore.Version, cache blockCache) (flowdoc.Document, error) {
	d := flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: make([]flowdoc.Block, 0, len(v.Blocks))}
	for _, be := range v.Blocks {
		b, ok := cache[be.Content]
		if !ok {
			data, err := objs.GetContent(be.Content)
			if err != nil {
				return flowdoc.Document{}, fmt.Errorf("block %s of %s@%s: %w", be.ID, v.Doc, v.Label, err)
			}
			if b, err = objstore.DecodeContent(data); err != nil {
				return flowdoc.Document{}, fmt.Errorf("block %s of %s@%s: %w", be.ID, v.Doc, v.Label, err)
			}
			if cache != nil {
				if len(cache) >= blockCacheMax {
					clear(cache)
				}
				cache[be.Content] = b
			}
		}
		b.ID = be.ID
		d.Blocks = append(d.Blocks, b)
	}
	return d, nil
}

// VersionJSON is the exact bytes `folio show ID@LABEL --format json`
// prints for body d: its canonical JSON and a newline. The git export's
// .json blobs are these bytes.
func VersionJSON(d flowdoc.Document) []byte {
	return append(flowdoc.CanonicalJSON(d), '\n')
}

// gitVersion is one version waiting to become a commit.
type gitVersion struct {
	id   objstore.ID
	seq  uint64
	time int64
}

// docQueue is one document's versions, oldest first.
type docQueue struct {
	doc  string
	path string
	vs   []gitVersion
	next int
}

// commitHeap orders documents by the time of their next version, then
// document id, so commits interleave across documents in time order while
// each document's versions stay in sequence order.
type commitHeap []*docQueue

func (h commitHeap) Len() int { return len(h) }
func (h commitHeap) Less(i, j int) bool {
	a, b := h[i].vs[h[i].next], h[j].vs[h[j].next]
	if a.time != b.time {
		return a.time < b.time
	}
	return h[i].doc < h[j].doc
}
func (h commitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *commitHeap) Push(x any)   { *h = append(*h, x.(*docQueue)) }
func (h *commitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

var safeSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`)

// GitBranch returns the git ref the commits of branch go to: "" is
// refs/heads/main, a name without "refs/" a branch under refs/heads/. A
// name git would refuse is an errs.Invalid error.
func GitBranch(branch string) (string, error) {
	name := branch
	if name == "" {
		name = "refs/heads/main"
	} else if !strings.HasPrefix(name, "refs/") {
		name = "refs/heads/" + name
	}
	if strings.ContainsAny(name, " \t\n~^:?*[\\") || strings.Contains(name, "..") {
		return "", errs.E(errs.Invalid, "%q is not a valid git branch name", branch)
	}
	return name, nil
}

// ExportGit writes a `git fast-import` stream to w: one commit per version
// of the chosen documents on one branch, in time order (each document's
// versions in sequence order), every commit setting docs/<name>.md (the
// Markdown rendering with the attributes as front matter) and
// docs/<name>.json (VersionJSON of the version). <name> is the head
// version's slug when it is a safe file name used by no other exported
// document, else the document id; it stays fixed over the document's
// history. A document's published version (its docs/<id>/published ref)
// is the lightweight tag refs/tags/published/<id> on that version's commit.
// The stream is deterministic: the same store gives the same commits. Memory holds one (id, seq, time) per version, not bodies.
func ExportGit(ctx context.Context, s Stores, w io.Writer, o GitOptions) (GitStats, error) {
	st := GitStats{Paths: map[string]string{}}
	branch, err := GitBranch(o.Branch)
	if err != nil {
		return st, err
	}
	heads, err := chooseHeads(s, o.Docs)
	if err != nil {
		return st, err
	}
	var queues []*docQueue
	slugs := map[string]int{}
	published := map[string]objstore.ID{} // document -> its published version
	for _, h := range heads {
		doc, ok := DocOfRef(h.Name)
		if !ok {
			if pd, ok := DocOfPublishedRef(h.Name); ok {
				published[pd] = h.ID
			}
			continue
		}
		q, slug, err := docHistory(ctx, s.Objects, doc, h.ID)
		if err != nil {
			return st, err
		}
		if safeSlug.MatchString(slug) {
			slugs[slug]++
			q.path = slug
		}
		queues = append(queues, q)
	}
	ids := map[string]bool{}
	for _, q := range queues {
		ids[q.doc] = true
	}
	for _, q := range queues {
		// A slug shared by two documents, or equal to another document's
		// id, would make paths collide: fall back to the id.
		if q.path == "" || slugs[q.path] > 1 || (ids[q.path] && q.path != q.doc) {
			q.path = q.doc
		}
		q.path = "docs/" + q.path
		st.Paths[q.doc] = q.path
	}
	st.Docs = len(queues)
	bw := bufio.NewWriterSize(w, 256<<10)
	cache := blockCache{}
	assets := map[string]string{}  // hex id -> its path in the tree, once written
	marks := map[objstore.ID]int{} // commit mark of each published version
	for _, id := range published {
		marks[id] = 0
	}
	h := commitHeap(queues)
	heap.Init(&h)
	for h.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		q := h[0]
		gv := q.vs[q.next]
		if err := writeCommit(bw, s.Objects, cache, assets, branch, q, gv.id, st.Commits+1); err != nil {
			return st, err
		}
		st.Commits++
		if _, ok := marks[gv.id]; ok {
			marks[gv.id] = st.Commits
		}
		q.next++
		if q.next == len(q.vs) {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	// Each published version is the tag refs/tags/published/<doc>, in
	// document order so that the stream stays deterministic.
	docs := make([]string, 0, len(published))
	for d := range published {
		docs = append(docs, d)
	}
	sort.Strings(docs)
	for _, d := range docs {
		if m := marks[published[d]]; m > 0 {
			fmt.Fprintf(bw, "reset refs/tags/published/%s\nfrom :%d\n\n", d, m)
		}
	}
	if _, err := bw.WriteString("done\n"); err != nil {
		return st, err
	}
	return st, bw.Flush()
}

// docHistory collects every version reachable from head, in sequence
// order, and returns the head's slug.
func docHistory(ctx context.Context, objs *objstore.Store, doc string, head objstore.ID) (*docQueue, string, error) {
	q := &docQueue{doc: doc}
	var slug string
	seen := map[objstore.ID]bool{head: true}
	stack := []objstore.ID{head}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		v, err := objs.GetVersion(id)
		if err != nil {
			return nil, "", fmt.Errorf("pack: document %s: version %s: %w", doc, id.Short(), err)
		}
		if id == head {
			slug = v.Attrs.Slug
		}
		q.vs = append(q.vs, gitVersion{id: id, seq: v.Seq, time: v.Time})
		for _, p := range v.Parents {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	sort.Slice(q.vs, func(i, j int) bool {
		if q.vs[i].seq != q.vs[j].seq {
			return q.vs[i].seq < q.vs[j].seq
		}
		return q.vs[i].time < q.vs[j].time
	})
	return q, slug, nil
}

// AssetDir is where the git export puts assets: beside the documents,
// one file per asset named by its hash, so that every document's
// Markdown names them by the relative path assets/<hash>.<ext>.
const AssetDir = "docs/assets/"

func writeCommit(w *bufio.Writer, objs *objstore.Store, cache blockCache, assets map[string]string, branch string, q *docQueue, id objstore.ID, mark int) error {
	v, err := objs.GetVersion(id)
	if err != nil {
		return fmt.Errorf("pack: document %s: version %s: %w", q.doc, id.Short(), err)
	}
	body, err := materialize(objs, v, cache)
	if err != nil {
		return fmt.Errorf("pack: %w", err)
	}
	ident := gitIdent(v.Author, v.Time)
	fmt.Fprintf(w, "commit %s\nmark :%d\nauthor %s\ncommitter %s\n", branch, mark, ident, ident)
	writeData(w, []byte(commitMessage(v, id)))
	// The first commit that references an asset adds its file; the
	// branch's later trees keep it.
	for _, h := range flowdoc.DocAssetRefs(body) {
		if _, ok := assets[h]; ok {
			continue
		}
		aid, err := objstore.ParseID(h)
		if err != nil {
			return fmt.Errorf("pack: document %s: %w", q.doc, err)
		}
		a, err := objs.GetAsset(aid)
		if err != nil {
			return fmt.Errorf("pack: document %s: version %s: asset %s: %w", q.doc, id.Short(), aid.Short(), err)
		}
		path := AssetDir + h + mediatype.Ext(a.MIME)
		writeFile(w, path, a.Data)
		assets[h] = path
	}
	md := flowdoc.MapAssets(body, func(h string) string {
		p, _ := strings.CutPrefix(assets[h], "docs/")
		return p
	})
	writeFile(w, q.path+".md", []byte(markdownFile(v, md)))
	writeFile(w, q.path+".json", VersionJSON(body))
	_, err = w.WriteString("\n")
	return err
}

func writeData(w *bufio.Writer, b []byte) {
	fmt.Fprintf(w, "data %d\n", len(b))
	w.Write(b)
	w.WriteByte('\n')
}

func writeFile(w *bufio.Writer, path string, b []byte) {
	fmt.Fprintf(w, "M 100644 inline %s\n", path)
	writeData(w, b)
}

var identBad = strings.NewReplacer("<", "", ">", "", "\n", " ", "\x00", "")

func gitIdent(author string, ms int64) string {
	name := strings.TrimSpace(identBad.Replace(author))
	if name == "" {
		name = "unknown"
	}
	email := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' {
			return '.'
		}
		return r
	}, name)
	return fmt.Sprintf("%s <%s@folio.invalid> %d +0000", name, email, floorDiv(ms, 1000))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// commitMessage names the document, label and kind on the subject line
// and records the Folio identity as trailers.
func commitMessage(v *objstore.Version, id objstore.ID) string {
	title := strings.TrimSpace(strings.ReplaceAll(v.Attrs.Title, "\n", " "))
	if title == "" {
		title = v.Doc
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (%s)", title, v.Label, v.Kind)
	if v.Reason != "" {
		fmt.Fprintf(&b, " [%s]", v.Reason)
	}
	b.WriteString("\n\n")
	if m := strings.TrimSpace(v.Message); m != "" {
		b.WriteString(m)
		b.WriteString("\n\n")
	}
	if v.RestoredFrom != "" {
		fmt.Fprintf(&b, "Restored-From: %s\n", v.RestoredFrom)
	}
	fmt.Fprintf(&b, "Folio-Document: %s\nFolio-Version: %s\nFolio-Kind: %s\nFolio-Hash: %s\nFolio-Time: %s\n",
		v.Doc, v.Label, v.Kind, id, time.UnixMilli(v.Time).UTC().Format(time.RFC3339Nano))
	return b.String()
}

// markdownFile is the attributes as YAML front matter (JSON-quoted
// strings, which YAML reads as double-quoted scalars) and the rendered body.
func markdownFile(v *objstore.Version, body flowdoc.Document) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "title: %s\n", q(v.Attrs.Title))
	a := v.Attrs
	for _, kv := range [][2]string{{"summary", a.Summary}, {"slug", a.Slug}, {"category", a.Category},
		{"status", a.Status}, {"visibility", a.Visibility}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], q(kv[1]))
		}
	}
	if len(a.Tags) > 0 {
		tags := make([]string, len(a.Tags))
		for i, t := range a.Tags {
			tags[i] = q(t)
		}
		fmt.Fprintf(&b, "tags: [%s]\n", strings.Join(tags, ", "))
	}
	fmt.Fprintf(&b, "document: %s\nversion: %s\n---\n\n", q(v.Doc), q(v.Label))
	md := flowdoc.RenderMarkdown(body)
	b.WriteString(md)
	if md != "" && !strings.HasSuffix(md, "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

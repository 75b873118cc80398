package docs_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/specdoc"
)

// TestFlowdocSpec holds docs/flowdoc.md against package flowdoc (and the
// parts of internal/repo and internal/config it states): every annotated
// example, every annotated table, and the list of rules. Annotations
// (<!-- check: KIND … --> before a fence or table, see internal/specdoc):
//
//	document [name=N]       a FlowDocument that parses and validates
//	block                   one block that parses and validates as a document's only block
//	invalid [maxBlocks= maxBytes=]   a document the server refuses; the next example
//	                        (problems) lists exactly the problems, in order
//	sanitize / canonical    a document and the exact canonical JSON it is stored as
//	content, content-hash, fingerprint doc=N [block=ID]   the hex of those encodings
//	plaintext doc=N block=ID   the plain text and its lengths in code points, UTF-16, UTF-8
//	ops doc=N               operations; the next example is the result, the problems or
//	                        the error (op-error) of applying them to document N
//	invalid-changes doc=N [maxBlocks= maxBytes=]   block-level changes a draft save refuses
//	attrs / invalid-attrs   article attributes a save accepts / refuses
//
// Tables: block-types, fields type=T, marks, limits, msgpack-keys, op-fields,
// rules, article-attrs. The test fails on an unannotated json fence and on a
// kind it does not know.
func TestFlowdocSpec(t *testing.T) {
	d := specdoc.Load(t, "flowdoc.md")
	s := &spec{doc: d, docs: map[string]flowdoc.Document{}, blocks: map[flowdoc.BlockType]json.RawMessage{}, ops: map[flowdoc.OpKind]bool{}}
	for _, e := range d.Annotated("block") {
		var b struct {
			Type flowdoc.BlockType `json:"type"`
		}
		if err := json.Unmarshal([]byte(e.Text), &b); err != nil {
			t.Fatalf("%s: %v", e.Where(), err)
		}
		if _, ok := s.blocks[b.Type]; !ok {
			s.blocks[b.Type] = json.RawMessage(e.Text)
		}
	}
	t.Run("links", func(t *testing.T) {
		for _, err := range d.CheckLinks() {
			t.Error(err)
		}
	})
	t.Run("examples", s.examples)
	t.Run("block types", s.blockTypes)
	t.Run("fields", s.fields)
	t.Run("marks", s.marks)
	t.Run("limits", s.limits)
	t.Run("msgpack keys", s.msgpackKeys)
	t.Run("op fields", s.opFields)
	t.Run("article attrs", s.articleAttrs)
	t.Run("rules", func(t *testing.T) {
		if !s.ranExamples {
			t.Skip("the rule list is checked against the problems the examples produce; run the whole test")
		}
		s.rules(t)
	})
}

type spec struct {
	doc    *specdoc.Doc
	docs   map[string]flowdoc.Document           // named document examples, normalized
	blocks map[flowdoc.BlockType]json.RawMessage // the first block example of each type (its fields table is checked with it)
	ops    map[flowdoc.OpKind]bool               // operation kinds the examples use
	seen   []flowdoc.Problem                     // every problem the examples produced

	ranExamples bool // the examples ran (not filtered out by -run)
}

// examples checks every fenced example in document order.
func (s *spec) examples(t *testing.T) {
	s.ranExamples = true
	for _, e := range s.doc.Unannotated("json") {
		t.Errorf("%s: json example without a check annotation: every JSON example must be checked", e.Where())
	}
	ex := s.doc.Examples
	// next returns the example after i, which must be of one of kinds.
	next := func(i int, kinds ...string) (specdoc.Example, bool) {
		if i+1 >= len(ex) || !slices.Contains(kinds, ex[i+1].Check.Kind) {
			t.Errorf("%s: %s example must be followed by a %s example", ex[i].Where(), ex[i].Check.Kind, strings.Join(kinds, " or "))
			return specdoc.Example{}, false
		}
		return ex[i+1], true
	}
	for i := 0; i < len(ex); i++ {
		e := ex[i]
		switch e.Check.Kind {
		case "":
			// Prose (js, text) and unannotated json, reported above.
		case "document":
			d, err := parseValid(e.Text)
			if err != nil {
				t.Errorf("%s: %v", e.Where(), err)
				continue
			}
			if name := e.Check.Arg("name"); name != "" {
				if _, dup := s.docs[name]; dup {
					t.Errorf("%s: a second document named %q", e.Where(), name)
				}
				s.docs[name] = d
			}
		case "block":
			d, err := parseValid(`{"schemaVersion":1,"blocks":[` + e.Text + `]}`)
			if err != nil {
				t.Errorf("%s: %v", e.Where(), err)
			} else if len(d.Blocks) != 1 {
				t.Errorf("%s: a block example holds one block", e.Where())
			}
		case "invalid":
			want, ok := next(i, "problems")
			if !ok {
				continue
			}
			i++
			l, err := limitsOf(e)
			if err != nil {
				t.Errorf("%s: %v", e.Where(), err)
				continue
			}
			d, err := flowdoc.Parse([]byte(e.Text))
			if err == nil {
				_, err = flowdoc.Normalize(d, l)
			}
			if err == nil {
				t.Errorf("%s: the server accepts this invalid example", e.Where())
				continue
			}
			s.expectProblems(t, want, problemsOf(t, e, err))
		case "sanitize":
			want, ok := next(i, "canonical")
			if !ok {
				continue
			}
			i++
			d, err := parseValid(e.Text)
			if err != nil {
				t.Errorf("%s: %v", e.Where(), err)
				continue
			}
			if got := string(flowdoc.CanonicalJSON(d)); got != want.Text {
				t.Errorf("%s: canonical JSON differs\n got: %s\nwant: %s", want.Where(), got, want.Text)
			}
		case "content", "content-hash", "fingerprint":
			s.encoding(t, e)
		case "plaintext":
			s.plaintext(t, e)
		case "ops":
			out, ok := next(i, "result", "problems", "op-error")
			if !ok {
				continue
			}
			i++
			s.operations(t, e, out)
		case "invalid-changes":
			want, ok := next(i, "problems")
			if !ok {
				continue
			}
			i++
			s.changes(t, e, want)
		case "attrs":
			var a flowdoc.Attributes
			if err := e.DecodeJSON(&a); err != nil {
				t.Error(err)
				continue
			}
			if err := saveAttrs(t, a); err != nil {
				t.Errorf("%s: the server refuses these attributes: %v", e.Where(), err)
			}
		case "invalid-attrs":
			want, ok := next(i, "problems")
			if !ok {
				continue
			}
			i++
			var a flowdoc.Attributes
			if err := e.DecodeJSON(&a); err != nil {
				t.Error(err)
				continue
			}
			err := saveAttrs(t, a)
			if err == nil {
				t.Errorf("%s: the server accepts these invalid attributes", e.Where())
				continue
			}
			s.expectProblems(t, want, problemsOf(t, e, err))
		case "problems", "canonical", "result", "op-error":
			t.Errorf("%s: a %s example must follow the example it answers", e.Where(), e.Check.Kind)
		default:
			t.Errorf("%s: unknown check kind %q", e.Where(), e.Check.Kind)
		}
	}
	for _, typ := range flowdoc.BlockTypes {
		if _, ok := s.blocks[typ]; !ok {
			t.Errorf("flowdoc.md has no block example of type %s", typ)
		}
		if !s.hasHeading(3, string(typ)) {
			t.Errorf("flowdoc.md has no section \"### %s\"", typ)
		}
	}
	for _, k := range flowdoc.OpKinds {
		if !s.ops[k] {
			t.Errorf("flowdoc.md has no example of operation %s", k)
		}
		if !s.hasHeading(3, string(k)) {
			t.Errorf("flowdoc.md has no section on operation %s", k)
		}
	}
}

// hasHeading reports whether the doc has a heading of level whose text is
// name, alone or in a comma-separated list ("insert_before, insert_after").
func (s *spec) hasHeading(level int, name string) bool {
	for _, h := range s.doc.Headings {
		if h.Level == level && slices.Contains(strings.Split(h.Text, ", "), name) {
			return true
		}
	}
	return false
}

// parseValid reads a document as the server does and requires it valid.
func parseValid(text string) (flowdoc.Document, error) {
	d, err := flowdoc.Parse([]byte(text))
	if err != nil {
		return flowdoc.Document{}, err
	}
	return flowdoc.Normalize(d, flowdoc.DefaultLimits)
}

func limitsOf(e specdoc.Example) (flowdoc.Limits, error) {
	var l flowdoc.Limits
	for name, p := range map[string]*int{"maxBlocks": &l.MaxBlocks, "maxBytes": &l.MaxBytes} {
		if v := e.Check.Arg(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return l, fmt.Errorf("%s=%q is not a positive integer", name, v)
			}
			*p = n
		}
	}
	return l, nil
}

// problemsOf extracts the problems of a validation, guard or repo error.
func problemsOf(t *testing.T, e specdoc.Example, err error) []flowdoc.Problem {
	t.Helper()
	var ve *flowdoc.ValidationError
	var ce *flowdoc.ComplexError
	switch {
	case errors.As(err, &ve):
		return ve.Problems
	case errors.As(err, &ce):
		return ce.Problems
	}
	t.Errorf("%s: the error carries no problems: %v", e.Where(), err)
	return nil
}

// expectProblems compares got with the problems example want, exactly and
// in order, and records got for the rule list.
func (s *spec) expectProblems(t *testing.T, want specdoc.Example, got []flowdoc.Problem) {
	t.Helper()
	s.seen = append(s.seen, got...)
	var ps []flowdoc.Problem
	if err := want.DecodeJSON(&ps); err != nil {
		t.Error(err)
		return
	}
	if !slices.Equal(ps, got) {
		g, _ := json.Marshal(got)
		t.Errorf("%s: problems differ\n got: %s\nwant: %s", want.Where(), g, compact(want.Text))
	}
}

func compact(s string) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return s
	}
	return buf.String()
}

// named returns the document example named by the annotation's doc
// argument, and the block named by its block argument when asked.
func (s *spec) named(t *testing.T, e specdoc.Example, wantBlock bool) (flowdoc.Document, flowdoc.Block, bool) {
	t.Helper()
	d, ok := s.docs[e.Check.Arg("doc")]
	if !ok {
		t.Errorf("%s: doc=%q names no earlier document example", e.Where(), e.Check.Arg("doc"))
		return d, flowdoc.Block{}, false
	}
	if !wantBlock {
		return d, flowdoc.Block{}, true
	}
	for _, b := range d.Blocks {
		if b.ID == e.Check.Arg("block") {
			return d, b, true
		}
	}
	t.Errorf("%s: document %q has no top-level block %q", e.Where(), e.Check.Arg("doc"), e.Check.Arg("block"))
	return d, flowdoc.Block{}, false
}

var hexPair = regexp.MustCompile(`^[0-9a-f]{2}$`)

// encoding checks a content / content-hash / fingerprint listing. A content
// listing may describe its bytes: on each line, the hex pairs before the
// first other word count.
func (s *spec) encoding(t *testing.T, e specdoc.Example) {
	d, b, ok := s.named(t, e, e.Check.Kind != "fingerprint")
	if !ok {
		return
	}
	var got, want string
	switch e.Check.Kind {
	case "content":
		got = hex.EncodeToString(flowdoc.EncodeContent(b))
		for _, line := range strings.Split(e.Text, "\n") {
			for _, f := range strings.Fields(line) {
				if !hexPair.MatchString(f) {
					break
				}
				want += f
			}
		}
	case "content-hash":
		h := flowdoc.ContentHash(b)
		got, want = hex.EncodeToString(h[:]), strings.TrimSpace(e.Text)
	case "fingerprint":
		got, want = flowdoc.FingerprintOf(d).String(), strings.TrimSpace(e.Text)
	}
	if got != want {
		t.Errorf("%s: %s differs\n got: %s\nwant: %s", e.Where(), e.Check.Kind, got, want)
	}
}

func (s *spec) plaintext(t *testing.T, e specdoc.Example) {
	_, b, ok := s.named(t, e, true)
	if !ok {
		return
	}
	var want struct {
		PlainText  string `json:"plainText"`
		CodePoints int    `json:"codePoints"`
		UTF16Units int    `json:"utf16Units"`
		UTF8Bytes  int    `json:"utf8Bytes"`
	}
	if err := e.DecodeJSON(&want); err != nil {
		t.Error(err)
		return
	}
	pt := flowdoc.PlainText(b.RichText)
	if pt != want.PlainText || utf8.RuneCountInString(pt) != want.CodePoints ||
		len(utf16.Encode([]rune(pt))) != want.UTF16Units || len(pt) != want.UTF8Bytes {
		t.Errorf("%s: plain text %q: %d code points, %d UTF-16 units, %d bytes; the example says %+v",
			e.Where(), pt, utf8.RuneCountInString(pt), len(utf16.Encode([]rune(pt))), len(pt), want)
	}
}

// operations applies an ops example and checks its outcome.
func (s *spec) operations(t *testing.T, e, out specdoc.Example) {
	d, _, ok := s.named(t, e, false)
	if !ok {
		return
	}
	var ops []flowdoc.Op
	if err := e.DecodeJSON(&ops); err != nil {
		t.Error(err)
		return
	}
	for _, op := range ops {
		s.ops[op.Op] = true
	}
	got, err := flowdoc.Apply(d, ops, flowdoc.DefaultLimits)
	switch out.Check.Kind {
	case "result":
		if err != nil {
			t.Errorf("%s: the operations fail: %v", e.Where(), err)
			return
		}
		want, perr := flowdoc.Parse([]byte(out.Text))
		if perr != nil {
			t.Errorf("%s: %v", out.Where(), perr)
			return
		}
		if g, w := flowdoc.CanonicalJSON(got), flowdoc.CanonicalJSON(want); !bytes.Equal(g, w) {
			t.Errorf("%s: result differs\n got: %s\nwant: %s", out.Where(), g, w)
		}
	case "problems":
		if err == nil {
			t.Errorf("%s: the operations succeed; the example says they fail", e.Where())
			return
		}
		s.expectProblems(t, out, problemsOf(t, e, err))
	case "op-error":
		if err == nil {
			t.Errorf("%s: the operations succeed; the example says they fail", e.Where())
			return
		}
		if err.Error() != strings.TrimSpace(out.Text) {
			t.Errorf("%s: error differs\n got: %s\nwant: %s", out.Where(), err, strings.TrimSpace(out.Text))
		}
	}
}

// openRepo opens a fresh store with limits l.
func openRepo(t *testing.T, l flowdoc.Limits) *repo.Repo {
	t.Helper()
	dir := t.TempDir()
	r, err := repo.Open(dir, repo.Options{Limits: l, KV: kv.Options{Create: true, CacheSize: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// changes saves an invalid-changes example against the named document
// and compares the problems.
func (s *spec) changes(t *testing.T, e, want specdoc.Example) {
	d, _, ok := s.named(t, e, false)
	if !ok {
		return
	}
	var cs []repo.DraftChange
	if err := e.DecodeJSON(&cs); err != nil {
		t.Error(err)
		return
	}
	l, err := limitsOf(e)
	if err != nil {
		t.Errorf("%s: %v", e.Where(), err)
		return
	}
	r := openRepo(t, l)
	if _, err := r.CreateDoc(t.Context(), repo.CreateParams{ID: "spec", Owner: "author-a",
		Attrs: flowdoc.Attributes{Title: "Spec"}, Body: d}); err != nil {
		t.Fatalf("%s: create: %v", e.Where(), err)
	}
	dr, err := r.Draft(t.Context(), "spec")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.SaveDraft(t.Context(), repo.SaveParams{Doc: "spec", Actor: "author-a", BaseSeq: dr.Seq, Changes: cs})
	if err == nil {
		t.Errorf("%s: the server accepts these changes", e.Where())
		return
	}
	s.expectProblems(t, want, problemsOf(t, e, err))
}

// saveAttrs saves article attributes to a fresh document.
func saveAttrs(t *testing.T, a flowdoc.Attributes) error {
	r := openRepo(t, flowdoc.Limits{})
	if _, err := r.CreateDoc(t.Context(), repo.CreateParams{ID: "spec", Owner: "author-a",
		Attrs: flowdoc.Attributes{Title: "Spec"}, Body: flowdoc.Document{SchemaVersion: 1}}); err != nil {
		t.Fatal(err)
	}
	dr, err := r.Draft(t.Context(), "spec")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.SaveDraft(t.Context(), repo.SaveParams{Doc: "spec", Actor: "author-a", BaseSeq: dr.Seq, Attrs: &a})
	return err
}

// table returns the table annotated kind, failing t when there is none.
func (s *spec) table(t *testing.T, kind string, cols ...string) *specdoc.Table {
	t.Helper()
	tb, err := s.doc.Table(kind)
	if err == nil {
		err = tb.RequireColumns(cols...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// blockTypes: the overview table lists exactly the code's block types, with
// their kind and whether replace_selection edits them.
func (s *spec) blockTypes(t *testing.T) {
	tb := s.table(t, "block-types", "type", "kind", "replace_selection")
	documented := map[flowdoc.BlockType]bool{}
	for _, row := range tb.Rows {
		typ := flowdoc.BlockType(specdoc.Plain(row.Cell("type")))
		if documented[typ] {
			t.Errorf("%s: %s listed twice", row.Where(), typ)
		}
		documented[typ] = true
		if !slices.Contains(flowdoc.BlockTypes, typ) {
			t.Errorf("%s: the code knows no block type %q", row.Where(), typ)
			continue
		}
		kind := "complex"
		if typ.IsText() {
			kind = "text"
		}
		if got := row.Cell("kind"); got != kind {
			t.Errorf("%s: %s is a %s block, the table says %q", row.Where(), typ, kind, got)
		}
		raw, ok := s.blocks[typ]
		if !ok {
			continue // reported by examples
		}
		d, err := parseValid(`{"schemaVersion":1,"blocks":[` + string(raw) + `]}`)
		if err != nil {
			t.Fatal(err)
		}
		_, err = flowdoc.Apply(d, []flowdoc.Op{{Op: flowdoc.ReplaceSelection, BlockID: d.Blocks[0].ID,
			RichText: []flowdoc.Run{{Text: "x"}}}}, flowdoc.DefaultLimits)
		selectable := "yes"
		if err != nil {
			selectable = "no"
		}
		if got := row.Cell("replace_selection"); got != selectable {
			t.Errorf("%s: replace_selection on %s: the code says %s, the table %q (%v)", row.Where(), typ, selectable, got, err)
		}
	}
	for _, typ := range flowdoc.BlockTypes {
		if !documented[typ] {
			t.Errorf("%s: block type %s is missing from the table", tb.Where(), typ)
		}
	}
}

// blockFields are the fields of a block besides id, type and attrs, with a
// value that sets each.
var blockFields = map[string]func(*flowdoc.Block){
	"richText": func(b *flowdoc.Block) { b.RichText = []flowdoc.Run{{Text: "x"}} },
	"items":    func(b *flowdoc.Block) { b.Items = []flowdoc.ListItem{{}} },
	"rows":     func(b *flowdoc.Block) { b.Rows = []flowdoc.TableRow{{Cells: [][]flowdoc.Run{nil}}} },
	"children": func(b *flowdoc.Block) { b.Children = []flowdoc.Block{{ID: "child", Type: flowdoc.Paragraph}} },
	"columns":  func(b *flowdoc.Block) { b.Cols = []flowdoc.Column{{}} },
}

// attrField returns the field of flowdoc.Attrs with JSON name name.
func attrField(a *flowdoc.Attrs, name string) (reflect.Value, bool) {
	v := reflect.ValueOf(a).Elem()
	for i := 0; i < v.NumField(); i++ {
		tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if tag == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func attrNames() []string {
	var out []string
	typ := reflect.TypeFor[flowdoc.Attrs]()
	for i := 0; i < typ.NumField(); i++ {
		tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		out = append(out, tag)
	}
	return out
}

// accepted reports which fields and attributes ("attrs.level") a block of
// type typ may carry, by asking the validator about each one.
func accepted(typ flowdoc.BlockType) map[string]bool {
	out := map[string]bool{}
	refused := func(b flowdoc.Block, path string) bool {
		for _, p := range flowdoc.Validate(flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{b}}, flowdoc.DefaultLimits) {
			if p.Path == "blocks[0]."+path && strings.Contains(p.Rule, " block has no ") {
				return true
			}
		}
		return false
	}
	for name, set := range blockFields {
		b := flowdoc.Block{ID: "x", Type: typ}
		set(&b)
		if !refused(b, name) {
			out[name] = true
		}
	}
	for _, name := range attrNames() {
		b := flowdoc.Block{ID: "x", Type: typ, Attrs: &flowdoc.Attrs{}}
		f, _ := attrField(b.Attrs, name)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		default:
			f.SetInt(1)
		}
		if !refused(b, "attrs."+name) {
			out["attrs."+name] = true
		}
	}
	return out
}

// unset clears field (or "attrs.X") of b and reports whether it was set.
func unset(b *flowdoc.Block, field string) bool {
	if name, ok := strings.CutPrefix(field, "attrs."); ok {
		if b.Attrs == nil {
			return false
		}
		f, ok := attrField(b.Attrs, name)
		if !ok || f.IsZero() {
			return false
		}
		f.SetZero()
		return true
	}
	v := reflect.ValueOf(b).Elem()
	for i := 0; i < v.NumField(); i++ {
		tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if tag == field {
			if v.Field(i).Len() == 0 {
				return false
			}
			v.Field(i).SetZero()
			return true
		}
	}
	return false
}

// jsonTypes names the JSON type of an attribute by its Go kind.
var jsonTypes = map[reflect.Kind]string{reflect.String: "string", reflect.Int: "integer", reflect.Int64: "integer", reflect.Bool: "boolean"}

// fields: each type's field table lists exactly the fields and attributes
// the validator lets that type carry, with the right JSON type for
// attributes and "required" exactly when leaving the field out of the
// type's example makes it invalid there.
func (s *spec) fields(t *testing.T) {
	tables := map[flowdoc.BlockType]*specdoc.Table{}
	for _, tb := range s.doc.TablesAnnotated("fields") {
		typ := flowdoc.BlockType(tb.Check.Arg("type"))
		if !slices.Contains(flowdoc.BlockTypes, typ) {
			t.Errorf("%s: fields table of unknown type %q", tb.Where(), typ)
			continue
		}
		if tables[typ] != nil {
			t.Errorf("%s: a second fields table for %s", tb.Where(), typ)
		}
		if err := tb.RequireColumns("field", "JSON type", "required"); err != nil {
			t.Error(err)
			continue
		}
		tables[typ] = tb
	}
	for _, typ := range flowdoc.BlockTypes {
		tb := tables[typ]
		if tb == nil {
			t.Errorf("flowdoc.md has no fields table for %s", typ)
			continue
		}
		want := accepted(typ)
		var example *flowdoc.Block
		if raw, ok := s.blocks[typ]; ok {
			d, err := flowdoc.Parse([]byte(`{"blocks":[` + string(raw) + `]}`))
			if err != nil {
				t.Fatal(err)
			}
			example = &d.Blocks[0]
		}
		listed := map[string]bool{}
		for _, row := range tb.Rows {
			field := specdoc.Plain(row.Cell("field"))
			listed[field] = true
			if !want[field] {
				t.Errorf("%s: a %s block cannot carry %s", row.Where(), typ, field)
				continue
			}
			if name, ok := strings.CutPrefix(field, "attrs."); ok {
				f, _ := attrField(&flowdoc.Attrs{}, name)
				if jt := jsonTypes[f.Kind()]; row.Cell("JSON type") != jt {
					t.Errorf("%s: %s is a JSON %s; the table says %q", row.Where(), field, jt, row.Cell("JSON type"))
				}
			}
			if example == nil {
				continue
			}
			b := example.Clone()
			if !unset(&b, field) {
				t.Errorf("%s: the %s example does not set %s, so the test cannot check whether it is required", row.Where(), typ, field)
				continue
			}
			required := "no"
			for _, p := range flowdoc.Validate(flowdoc.Sanitize(flowdoc.Document{Blocks: []flowdoc.Block{b}}), flowdoc.DefaultLimits) {
				if p.Path == "blocks[0]."+field {
					required = "yes"
				}
			}
			if got := row.Cell("required"); got != required {
				t.Errorf("%s: %s of a %s block: required is %s, the table says %q", row.Where(), field, typ, required, got)
			}
		}
		for field := range want {
			if !listed[field] {
				t.Errorf("%s: a %s block may carry %s; the table does not list it", tb.Where(), typ, field)
			}
		}
	}
}

// marks: the mark table lists the code's marks in canonical order.
func (s *spec) marks(t *testing.T) {
	tb := s.table(t, "marks", "mark")
	var got []flowdoc.Mark
	for _, row := range tb.Rows {
		got = append(got, flowdoc.Mark(specdoc.Plain(row.Cell("mark"))))
	}
	if !slices.Equal(got, flowdoc.Marks) {
		t.Errorf("%s: marks %q; the code's, in canonical order, are %q", tb.Where(), got, flowdoc.Marks)
	}
}

// largest returns the largest n in [1, limit] for which ok(n) holds,
// scanning up from 1 (ok must hold for 1 and fail somewhere above).
func largest(limit int, ok func(n int) bool) int {
	n := 0
	for n < limit && ok(n+1) {
		n++
	}
	return n
}

func validBlock(b flowdoc.Block) bool {
	return len(flowdoc.Validate(flowdoc.Document{Blocks: []flowdoc.Block{b}}, flowdoc.DefaultLimits)) == 0
}

// limits: every row of the limit table states the code's value; rows for
// rules without an exported constant are measured.
func (s *spec) limits(t *testing.T) {
	tb := s.table(t, "limits", "limit", "value")
	def := config.Default().Limits
	code := map[string]func() int64{
		"doc_max_blocks":  func() int64 { return int64(def.DocMaxBlocks) },
		"doc_max_bytes":   func() int64 { return def.DocMaxBytes },
		"frame_bytes":     func() int64 { return def.FrameBytes },
		"MaxBlocks":       func() int64 { return int64(flowdoc.DefaultLimits.MaxBlocks) },
		"MaxBytes":        func() int64 { return int64(flowdoc.DefaultLimits.MaxBytes) },
		"MaxDepth":        func() int64 { return flowdoc.MaxDepth },
		"MaxListDepth":    func() int64 { return flowdoc.MaxListDepth },
		"MaxColumns":      func() int64 { return flowdoc.MaxColumns },
		"MaxTableColumns": func() int64 { return flowdoc.MaxTableColumns },
		"MaxURLLength":    func() int64 { return flowdoc.MaxURLLength },
		"block id length": func() int64 {
			return int64(largest(1000, func(n int) bool { return flowdoc.ValidID(strings.Repeat("a", n)) }))
		},
		"heading level": func() int64 {
			return int64(largest(100, func(n int) bool {
				return validBlock(flowdoc.Block{ID: "h", Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: n}})
			}))
		},
		"code language length": func() int64 {
			return int64(largest(1000, func(n int) bool {
				return validBlock(flowdoc.Block{ID: "c", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Language: strings.Repeat("é", n)}})
			}))
		},
		"callout icon length": func() int64 {
			return int64(largest(1000, func(n int) bool {
				return validBlock(flowdoc.Block{ID: "c", Type: flowdoc.Callout, Attrs: &flowdoc.Attrs{Icon: strings.Repeat("💡", n)}})
			}))
		},
		"JSON nesting": func() int64 {
			// The document object plus n-1 nested arrays as its blocks.
			return int64(largest(1000, func(n int) bool {
				_, err := flowdoc.Parse([]byte(`{"blocks":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`))
				return err == nil || !strings.Contains(err.Error(), "nesting deeper")
			}))
		},
	}
	listed := map[string]bool{}
	for _, row := range tb.Rows {
		name := specdoc.Plain(row.Cell("limit"))
		listed[name] = true
		f, ok := code[name]
		if !ok {
			t.Errorf("%s: the test knows no limit %q; add it to the test's table", row.Where(), name)
			continue
		}
		first, _, _ := strings.Cut(row.Cell("value"), " ")
		v, err := strconv.ParseInt(specdoc.Plain(first), 10, 64)
		if err != nil {
			t.Errorf("%s: value %q does not start with an integer", row.Where(), row.Cell("value"))
			continue
		}
		if got := f(); got != v {
			t.Errorf("%s: %s is %d in the code, %d in the doc", row.Where(), name, got, v)
		}
	}
	for name := range code {
		if !listed[name] {
			t.Errorf("%s: limit %s is missing from the table", tb.Where(), name)
		}
	}
}

// msgpackKeys: for each FlowDocument type, the key table lists exactly its
// fields' JSON and MessagePack keys in declaration order — the order both
// canonical encodings write them in, which the fingerprint depends on.
func (s *spec) msgpackKeys(t *testing.T) {
	tb := s.table(t, "msgpack-keys", "value", "JSON key", "MessagePack key")
	types := map[string]reflect.Type{
		"document": reflect.TypeFor[flowdoc.Document](), "block": reflect.TypeFor[flowdoc.Block](),
		"attrs": reflect.TypeFor[flowdoc.Attrs](), "run": reflect.TypeFor[flowdoc.Run](),
		"list item": reflect.TypeFor[flowdoc.ListItem](), "table row": reflect.TypeFor[flowdoc.TableRow](),
		"column": reflect.TypeFor[flowdoc.Column](),
	}
	rows := map[string][]string{}
	for _, row := range tb.Rows {
		value := row.Cell("value")
		if types[value] == nil {
			t.Errorf("%s: the code has no FlowDocument value %q", row.Where(), value)
			continue
		}
		rows[value] = append(rows[value], specdoc.Plain(row.Cell("JSON key"))+" "+specdoc.Plain(row.Cell("MessagePack key")))
	}
	for value, typ := range types {
		var want []string
		for i := 0; i < typ.NumField(); i++ {
			j, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			m, _, _ := strings.Cut(typ.Field(i).Tag.Get("msgpack"), ",")
			want = append(want, j+" "+m)
		}
		if !slices.Equal(rows[value], want) {
			t.Errorf("%s: %s keys (JSON MessagePack) are %q in the code, in this order; the table says %q", tb.Where(), value, want, rows[value])
		}
	}
}

// opFields: the operation table lists every operation the code knows, with
// exactly the fields Apply lets it take.
func (s *spec) opFields(t *testing.T) {
	tb := s.table(t, "op-fields", "op", "fields")
	setters := map[string]func(*flowdoc.Op){
		"blockId":  func(o *flowdoc.Op) { o.BlockID = "x" },
		"start":    func(o *flowdoc.Op) { o.Start = 1 },
		"end":      func(o *flowdoc.Op) { o.End = 1 },
		"richText": func(o *flowdoc.Op) { o.RichText = []flowdoc.Run{} },
		"block":    func(o *flowdoc.Op) { o.Block = &flowdoc.Block{} },
		"blocks":   func(o *flowdoc.Op) { o.Blocks = []flowdoc.Block{} },
		"document": func(o *flowdoc.Op) { o.Document = &flowdoc.Document{} },
		"confirm":  func(o *flowdoc.Op) { o.Confirm = true },
	}
	listed := map[flowdoc.OpKind]bool{}
	for _, row := range tb.Rows {
		kind := flowdoc.OpKind(specdoc.Plain(row.Cell("op")))
		listed[kind] = true
		if !slices.Contains(flowdoc.OpKinds, kind) {
			t.Errorf("%s: the code knows no operation %q", row.Where(), kind)
			continue
		}
		var doc []string
		for _, f := range strings.Split(row.Cell("fields"), ",") {
			doc = append(doc, specdoc.Plain(f))
		}
		var takes []string
		for name, set := range setters {
			op := flowdoc.Op{Op: kind}
			set(&op)
			_, err := flowdoc.Apply(flowdoc.Document{}, []flowdoc.Op{op}, flowdoc.DefaultLimits)
			if err == nil || !strings.Contains(err.Error(), "does not take "+name) {
				takes = append(takes, name)
			}
		}
		slices.Sort(doc)
		slices.Sort(takes)
		if !slices.Equal(doc, takes) {
			t.Errorf("%s: %s takes %q; the table says %q", row.Where(), kind, takes, doc)
		}
	}
	for _, k := range flowdoc.OpKinds {
		if !listed[k] {
			t.Errorf("%s: operation %s is missing from the table", tb.Where(), k)
		}
	}
}

// articleAttrs: the attribute table lists exactly flowdoc.Attributes.
func (s *spec) articleAttrs(t *testing.T) {
	tb := s.table(t, "article-attrs", "field")
	var got, want []string
	for _, row := range tb.Rows {
		got = append(got, specdoc.Plain(row.Cell("field")))
	}
	typ := reflect.TypeFor[flowdoc.Attributes]()
	for i := 0; i < typ.NumField(); i++ {
		j, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		want = append(want, j)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: fields %q; flowdoc.Attributes has %q", tb.Where(), got, want)
	}
}

var placeholder = regexp.MustCompile(`<[a-z ]+>`)

// rules: every problem seen — in the examples, in the shared vectors and in
// probes for rules no JSON example can reach — matches a rule of the table,
// and every rule of the table is seen at least once, so a rule added to or
// removed from the code without the doc fails here.
func (s *spec) rules(t *testing.T) {
	tb := s.table(t, "rules", "rule")
	type rule struct {
		row  specdoc.Row
		re   *regexp.Regexp
		seen bool
	}
	var rules []*rule
	for _, row := range tb.Rows {
		text := specdoc.Plain(row.Cell("rule"))
		parts := placeholder.Split(text, -1)
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		rules = append(rules, &rule{row: row, re: regexp.MustCompile("^" + strings.Join(parts, ".+") + "$")})
	}
	seen := append(slices.Clone(s.seen), vectorProblems(t)...)
	seen = append(seen, probeProblems(t)...)
	for _, p := range seen {
		matched := false
		for _, r := range rules {
			if r.re.MatchString(p.Rule) {
				r.seen, matched = true, true
			}
		}
		if !matched {
			t.Errorf("%s: rule %q (at %s) is not in the table", tb.Where(), p.Rule, p.Path)
		}
	}
	for _, r := range rules {
		if !r.seen {
			t.Errorf("%s: no example, vector or probe produces this rule; is it still in the code? (add a probe if it is)", r.row.Where())
		}
	}
}

// vectorProblems returns the problems of the invalid vectors of
// testdata/flowdoc/blocks.json.
func vectorProblems(t *testing.T) []flowdoc.Problem {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "flowdoc", "blocks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs struct {
		Invalid []struct {
			JSON   string          `json:"json"`
			Doc    json.RawMessage `json:"doc"`
			Limits *struct {
				MaxBlocks int `json:"maxBlocks"`
				MaxBytes  int `json:"maxBytes"`
			} `json:"limits"`
		} `json:"invalid"`
	}
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	var out []flowdoc.Problem
	for _, v := range vs.Invalid {
		in := []byte(v.JSON)
		if v.JSON == "" {
			in = v.Doc
		}
		l := flowdoc.DefaultLimits
		if v.Limits != nil {
			l = flowdoc.Limits{MaxBlocks: v.Limits.MaxBlocks, MaxBytes: v.Limits.MaxBytes}
		}
		d, err := flowdoc.Parse(in)
		var ve *flowdoc.ValidationError
		if errors.As(err, &ve) {
			out = append(out, ve.Problems...)
			continue
		}
		out = append(out, flowdoc.Validate(d, l)...)
	}
	return out
}

// probeProblems produces the rules no JSON example of the doc shows: input
// only MessagePack or the Go API can carry, inputs too large to print, and
// guard and attribute rules the examples leave out.
func probeProblems(t *testing.T) []flowdoc.Problem {
	var out []flowdoc.Problem
	para := func(text string) flowdoc.Block {
		return flowdoc.Block{ID: "p", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: text}}}
	}
	parse := func(in []byte) {
		var ve *flowdoc.ValidationError
		if _, err := flowdoc.Parse(in); errors.As(err, &ve) {
			out = append(out, ve.Problems...)
		}
	}
	parse([]byte{'{', 0xff, '}'})
	parse([]byte(`{"blocks":[{"id":"p","type":"paragraph","richText":[{"text":"\ud83d"}]}]}`))
	parse([]byte(`{"blocks":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`))
	out = append(out, flowdoc.Validate(flowdoc.Document{Blocks: []flowdoc.Block{para("\xff")}}, flowdoc.DefaultLimits)...)
	long := flowdoc.Block{ID: "p", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "x",
		Link: "https://example.com/" + strings.Repeat("a", flowdoc.MaxURLLength)}}}
	out = append(out, flowdoc.Validate(flowdoc.Document{Blocks: []flowdoc.Block{long}}, flowdoc.DefaultLimits)...)
	noSrc := flowdoc.Block{ID: "f", Type: flowdoc.File, Attrs: &flowdoc.Attrs{Name: "a.txt"}}
	out = append(out, flowdoc.Validate(flowdoc.Document{Blocks: []flowdoc.Block{noSrc}}, flowdoc.DefaultLimits)...)

	code := flowdoc.Block{ID: "c", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Text: "x"}}
	eq := flowdoc.Block{ID: "e", Type: flowdoc.Equation, Attrs: &flowdoc.Attrs{Latex: "x"}}
	before := flowdoc.Document{Blocks: []flowdoc.Block{code, eq}}
	asList := code
	asList.Type, asList.Attrs, asList.Items = flowdoc.List, nil, []flowdoc.ListItem{{}}
	out = append(out, flowdoc.GuardComplex(before, flowdoc.Document{Blocks: []flowdoc.Block{eq, asList}})...)
	out = append(out, flowdoc.GuardComplex(before, flowdoc.Document{Blocks: []flowdoc.Block{eq, code}})...)
	out = append(out, flowdoc.GuardComplex(before, flowdoc.Document{Blocks: []flowdoc.Block{code}})...)

	for _, a := range []flowdoc.Attributes{
		{Title: strings.Repeat("t", 513), Summary: strings.Repeat("s", 4097), Visibility: "secret",
			Tags: make([]string, 65)},
		{Title: "Notes\x1b[2J", Slug: strings.Repeat("s", 129), Category: strings.Repeat("c", 129)},
	} {
		var ve *flowdoc.ValidationError
		if err := saveAttrs(t, a); errors.As(err, &ve) {
			out = append(out, ve.Problems...)
		} else {
			t.Errorf("attribute probe: %v", err)
		}
	}

	// A save of changes that makes the draft too large.
	r := openRepo(t, flowdoc.Limits{MaxBytes: 200})
	if _, err := r.CreateDoc(t.Context(), repo.CreateParams{ID: "spec", Owner: "author-a",
		Attrs: flowdoc.Attributes{Title: "Spec"}, Body: flowdoc.Document{Blocks: []flowdoc.Block{para(strings.Repeat("a", 100))}}}); err != nil {
		t.Fatal(err)
	}
	dr, err := r.Draft(t.Context(), "spec")
	if err != nil {
		t.Fatal(err)
	}
	more := para(strings.Repeat("b", 100))
	more.ID = "q"
	_, err = r.SaveDraft(t.Context(), repo.SaveParams{Doc: "spec", Actor: "author-a", BaseSeq: dr.Seq,
		Changes: []repo.DraftChange{{Op: repo.ChangeUpsert, Block: &more}}})
	var ve *flowdoc.ValidationError
	if errors.As(err, &ve) {
		out = append(out, ve.Problems...)
	} else {
		t.Errorf("size probe: %v", err)
	}
	return out
}

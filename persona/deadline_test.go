package persona

import (
	"context"
	"errors"
	"testing"

	"github.com/foliodev/folio/persona/source"
)

// cancelAfterLoads is a content service that ends the generation's
// context once every source is loaded: what is left is CPU-bound work
// (style, memory) and the final write, with no I/O that would notice.
type cancelAfterLoads struct {
	*fakeSources
	left   int
	cancel context.CancelFunc
}

func (c *cancelAfterLoads) Load(ctx context.Context, pin source.Pin) (source.Document, error) {
	d, err := c.fakeSources.Load(ctx, pin)
	if c.left--; c.left == 0 {
		c.cancel()
	}
	return d, err
}

// TestGenerateHonoursContextInCPUWork: a generation whose deadline
// passes after its sources are loaded stops in the style or memory work
// with the context's error and writes no version.
func TestGenerateHonoursContextInCPUWork(t *testing.T) {
	w := newWorld(t, allOn)
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	w.src.publish("author-a", "d2", VisibilityPublic, 1, articleB()...)
	p, err := w.svc.Create(context.Background(), "author-a", "p", []string{"d1", "d2"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := &cancelAfterLoads{fakeSources: w.src, left: 2, cancel: cancel}
	if _, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p.ID}, src, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("generation after its context ended: %v", err)
	}
	if v := mustGenerate(t, w, "author-a", p.ID); v.Seq != 1 {
		t.Fatalf("the cancelled generation wrote a version: next is %d", v.Seq)
	}
}

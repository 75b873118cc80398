package errs_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
)

// typedErr stands for another package's typed error with a kind and code.
type typedErr struct{}

func (typedErr) Error() string                { return "writing quota reached" }
func (typedErr) ErrKind() errs.Kind           { return errs.RateLimited }
func (typedErr) ErrCode() string              { return "writing_rate_limited" }
func (typedErr) ErrRetryAfter() time.Duration { return 3 * time.Second }

func TestKindThroughWrapping(t *testing.T) {
	base := errs.E(errs.NotFound, "document %q not found", "d1")
	err := fmt.Errorf("open: %w", base)
	if got := errs.KindOf(err); got != errs.NotFound {
		t.Fatalf("KindOf = %v, want not_found", got)
	}
	if !errors.Is(err, errs.NotFound) || errors.Is(err, errs.Conflict) {
		t.Fatal("errors.Is must match the kind and only the kind")
	}
	if errs.CodeOf(err) != "not_found" || err.Error() != `open: document "d1" not found` {
		t.Fatalf("code %q message %q", errs.CodeOf(err), err)
	}
	if errs.Retryable(err) {
		t.Fatal("not found is not retryable")
	}
}

func TestSpecificCodeAndCause(t *testing.T) {
	cause := errors.New("disk said no")
	err := errs.C(errs.Conflict, "personalization_conflict", "choose one of persona, writing preset or editing preset: %w", cause)
	if errs.CodeOf(err) != "personalization_conflict" || errs.KindOf(err) != errs.Conflict {
		t.Fatalf("code %q kind %v", errs.CodeOf(err), errs.KindOf(err))
	}
	if !errors.Is(err, cause) {
		t.Fatal("%w must keep the cause")
	}
	if errs.KindOf(err).HTTPStatus() != http.StatusConflict || errs.KindOf(err).ExitCode() != errs.ExitConflict {
		t.Fatal("status and exit code come from the kind")
	}
}

func TestTypedErrors(t *testing.T) {
	err := fmt.Errorf("assist: %w", typedErr{})
	if errs.KindOf(err) != errs.RateLimited || errs.CodeOf(err) != "writing_rate_limited" {
		t.Fatalf("kind %v code %q", errs.KindOf(err), errs.CodeOf(err))
	}
	if !errs.Retryable(err) || errs.RetryAfterOf(err) != 3*time.Second {
		t.Fatal("rate limits are retryable after the error's delay")
	}
}

func TestUnclassifiedIsInternal(t *testing.T) {
	err := errors.New("pebble: something odd at offset 12")
	if errs.KindOf(err) != errs.Internal || errs.Message(err) != "internal error" {
		t.Fatalf("kind %v message %q", errs.KindOf(err), errs.Message(err))
	}
	if errs.KindOf(fmt.Errorf("x: %w", context.Canceled)) != errs.Canceled {
		t.Fatal("context.Canceled is Canceled")
	}
	if errs.KindOf(context.DeadlineExceeded) != errs.Unavailable {
		t.Fatal("a deadline is Unavailable")
	}
}

func TestNoRetry(t *testing.T) {
	e := errs.E(errs.Unavailable, "provider refused the model name")
	e.NoRetry = true
	if errs.Retryable(e) {
		t.Fatal("NoRetry wins over the kind")
	}
}

func TestTableIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range errs.Kinds() {
		name := k.String()
		if name == "" || seen[name] {
			t.Fatalf("kind %d has an empty or repeated name %q", k, name)
		}
		seen[name] = true
		if k.HTTPStatus() < 400 || k.ExitCode() == 0 {
			t.Fatalf("%s: status %d exit %d", name, k.HTTPStatus(), k.ExitCode())
		}
		if back, ok := errs.KindFromCode(name); !ok || back != k {
			t.Fatalf("%s does not parse back", name)
		}
	}
}

func TestRemoteKeepsKindCodeAndMessage(t *testing.T) {
	orig := errs.C(errs.RateLimited, "writing_rate_limited", "writing: 20 requests per minute reached; retry in 12s")
	got := errs.Remote(errs.KindOf(orig).String(), errs.CodeOf(orig), orig.Error())
	if errs.KindOf(got) != errs.RateLimited || errs.CodeOf(got) != "writing_rate_limited" || got.Error() != orig.Error() {
		t.Fatalf("remote %v/%q/%q", errs.KindOf(got), errs.CodeOf(got), got)
	}
	// Without a kind on the wire, a default code still gives the kind.
	if errs.KindOf(errs.Remote("", "not_found", "gone")) != errs.NotFound {
		t.Fatal("default codes map back to their kind")
	}
}

// TestFlowdocErrorsKeepTheirKinds: flowdoc's errors, which name their kind
// instead of importing this package, get the kind (and so the status and
// exit code) and match errors.Is for it, through wrapping.
func TestFlowdocErrorsKeepTheirKinds(t *testing.T) {
	for _, c := range []struct {
		err  error
		want errs.Kind
	}{
		{flowdoc.ErrBlockNotFound, errs.NotFound},
		{flowdoc.ErrBadOp, errs.Invalid},
		{flowdoc.ErrConfirmationRequired, errs.Invalid},
		{&flowdoc.ValidationError{Problems: []flowdoc.Problem{{Path: "$", Rule: "x"}}}, errs.Invalid},
		{&flowdoc.ComplexError{}, errs.Invalid},
	} {
		w := fmt.Errorf("wrapped: %w", c.err)
		if got := errs.KindOf(w); got != c.want {
			t.Errorf("KindOf(%v) = %s, want %s", c.err, got, c.want)
		}
		if !errors.Is(w, c.want) {
			t.Errorf("errors.Is(%v, %s) is false", c.err, c.want)
		}
		other := errs.NotFound
		if c.want == errs.NotFound {
			other = errs.Invalid
		}
		if errors.Is(w, other) {
			t.Errorf("errors.Is(%v, %s) is true", c.err, other)
		}
	}
	if errors.Is(flowdoc.ErrBadOp, flowdoc.ErrInvalid) {
		t.Error("ErrBadOp matches ErrInvalid: sentinels of one kind must stay distinct")
	}
}

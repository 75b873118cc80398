package assistant

import (
	"errors"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
)

// Specific error codes of the assistant service (stable, append-only; the
// kind of each decides its HTTP status and exit code, see package errs).
const (
	// CodeDisabled (kind disabled): the assistant, or the entry a request
	// uses, is switched off ([assistant] in the configuration).
	CodeDisabled = "assistant_disabled"
	// CodePersonalizationConflict (kind invalid): a request chose more than
	// one of persona, writing preset and editing preset.
	CodePersonalizationConflict = "personalization_conflict"
	// CodePersonaUnavailable (kind disabled): the service runs without
	// personas (Options.Personas is nil).
	CodePersonaUnavailable = "persona_unavailable"
	// CodeHistoryCorrupt (kind corrupt): a message's recorded version or
	// scope cannot be rebuilt; the details are in the log.
	CodeHistoryCorrupt = "history_source_corrupt"
	// CodeSuggestionConflicted (kind conflict): the suggestion's baseline
	// is stale; it is marked conflicted and nothing was written.
	CodeSuggestionConflicted = "suggestion_conflicted"
	// CodeSuggestionDecided (kind conflict): the suggestion was already
	// accepted or rejected the other way.
	CodeSuggestionDecided = "suggestion_decided"
	// CodeDeleteConfirmation (kind invalid): the suggestion deletes blocks
	// and the accept did not confirm it.
	CodeDeleteConfirmation = "delete_confirmation_required"
	// CodePresetArchived (kind invalid): new requests cannot choose an
	// archived preset.
	CodePresetArchived = "preset_archived"
)

// repoErr gives a content-service error its kind, keeping its message.
func repoErr(err error) error {
	var kinded interface{ ErrKind() errs.Kind }
	switch {
	case err == nil:
		return nil
	case errors.As(err, &kinded):
		return err
	case errors.Is(err, repo.ErrNotFound):
		return errs.Wrap(errs.NotFound, err)
	case errors.Is(err, repo.ErrConflict):
		return errs.Wrap(errs.Conflict, err)
	case errors.Is(err, repo.ErrInvalid):
		return errs.Wrap(errs.Invalid, err)
	}
	return err
}

// ErrKind gives gateway errors a kind: quota refusals are rate limited,
// provider outages unavailable, bad credentials forbidden, invalid output
// invalid, cancellations canceled.
func (e *Error) ErrKind() errs.Kind {
	switch e.Code {
	case CodeUnreachable, CodeProviderError, CodeStreamCut, CodeTimeout, CodeRateLimited:
		return errs.Unavailable
	case CodeUnauthorized:
		return errs.Forbidden
	case CodeBadRequest, CodeNotJSON, CodeInvalid:
		return errs.Invalid
	case CodeCancelled:
		return errs.Canceled
	case CodeNotConfigured:
		return errs.Disabled
	}
	return errs.RateLimited // the quota codes
}

// ErrCode is the gateway's own code.
func (e *Error) ErrCode() string { return e.Code }

package task

import (
	"context"
	"errors"
	"time"
)

// Error carries how a handler's failure should be treated. Build one with
// Permanent, RetryAfter or RateLimited; it unwraps to the cause.
type Error struct {
	Err error
	// Permanent failures fail the task at once.
	Permanent bool
	// After is the earliest retry delay the cause asked for (Retry-After).
	After time.Duration
	// RateLimited runs are requeued after After without spending an attempt.
	RateLimited bool
}

func (e *Error) Error() string {
	if e.Err == nil {
		return "task: error"
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Permanent marks err as not worth retrying (validation, budget, a
// cancelled request): the task fails at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err, Permanent: true}
}

// RetryAfter marks err as retryable no earlier than d from now (a
// provider's Retry-After). The retry spends an attempt.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err, After: d}
}

// RateLimited marks err as a rate limit: the task is requeued after d (the
// kind's BackoffBase when d <= 0) without spending an attempt.
func RateLimited(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err, After: d, RateLimited: true}
}

// retryable is implemented by errors that classify themselves (for example
// quota and provider errors) without importing this package.
type retryable interface{ Retryable() bool }

// outcome is how a failed run is classified.
type outcome struct {
	permanent   bool
	rateLimited bool
	after       time.Duration
}

// classify decides what a handler error means. Errors marked with this
// package's wrappers decide for themselves; then an error's own
// Retryable() method; context.Canceled (the work was called off) is
// permanent; anything else, including a timeout, is retryable.
func classify(err error) outcome {
	var te *Error
	if errors.As(err, &te) {
		return outcome{permanent: te.Permanent, rateLimited: te.RateLimited, after: te.After}
	}
	var r retryable
	if errors.As(err, &r) {
		return outcome{permanent: !r.Retryable()}
	}
	if errors.Is(err, context.Canceled) {
		return outcome{permanent: true}
	}
	return outcome{}
}

// IsRetryable reports whether the runner would retry a run that returned err.
func IsRetryable(err error) bool { return err != nil && !classify(err).permanent }

// Package e2e drives Folio's web editor in a real browser: Debian's
// chromium, headless, through the DevTools protocol (chromedp), against
// real `folio serve` processes on temporary data directories. The tests
// read like a person's actions and wait on DOM state and protocol acks
// (#sync-status[data-sync-state]), never on time.
//
// chromedp rather than playwright-core: it is a Go module (the suite runs
// under `go test` with the rest, no Node at test time) and speaks the
// DevTools protocol directly, which the IME tests need
// (Input.imeSetComposition).
//
// One browser serves the whole package run (TestMain); each test opens its
// own tabs. Without chromium the tests skip with the reason, except under
// CI=true, where they fail. Screenshots of each screen in both themes go to
// $FOLIO_SCREENSHOTS, or a temporary directory whose path the run prints.
package e2e

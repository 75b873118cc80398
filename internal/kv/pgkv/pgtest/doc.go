// Package pgtest starts a private PostgreSQL cluster for a test: Debian's
// server binaries (/usr/lib/postgresql/<version>/bin), initdb into a
// fresh temporary directory, the server listening only on a unix socket
// in that directory (on a free port number), stopped and removed when
// the test ends. Run as root (as CI does) the cluster is owned by and
// runs as the unprivileged user nobody, since PostgreSQL refuses root.
//
// Without PostgreSQL the test is skipped with a loud reason, except when
// CI=true or FOLIO_REQUIRE_POSTGRES is set (.ci/run sets it): there it
// fails, so CI cannot pass by skipping.
package pgtest

package assistant

import (
	"os"
	"testing"

	"github.com/foliodev/folio/internal/kv/pgkv/pgtest"
)

// TestMain starts the PostgreSQL cluster the suite shares when
// FOLIO_TEST_ENGINE=postgres.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

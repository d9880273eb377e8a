package upstream

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
)

// TestMain lets the test binary serve as a fake stdio upstream when it is
// started as one, and checks that no test leaves a goroutine behind.
func TestMain(m *testing.M) {
	fakeupstream.MaybeRun()
	goleak.VerifyTestMain(m)
}

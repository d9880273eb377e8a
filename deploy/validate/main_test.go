package main

import (
	"testing"

	"go.uber.org/goleak"
)

// kustomize and the BuildKit parser run in process: nothing they start may
// outlive a check.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

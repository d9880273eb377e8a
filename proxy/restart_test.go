package proxy

import (
	"testing"
	"time"
)

func TestHubRestartReconnectsAChild(t *testing.T) {
	h := startHub(t, stdioFake("alpha"))
	pid := callText(t, h, "alpha_pid", nil)
	if err := h.Restart("alpha"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "a new child", func() bool {
		res, err := h.CallTool(t.Context(), "alpha_pid", nil, nil)
		return err == nil && !res.IsError && callText(t, h, "alpha_pid", nil) != pid
	})
	if s := h.Status()[0]; s.Restarts != 1 || s.State != StateConnected {
		t.Errorf("status after restart: got %d restarts, %s; want 1, connected", s.Restarts, s.State)
	}
	if err := h.Restart("nope"); err == nil {
		t.Error("restarting an unknown upstream: no error")
	}
}

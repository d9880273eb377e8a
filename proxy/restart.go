package proxy

import (
	"errors"
	"fmt"
)

// ErrRestartRequested is the error an upstream restarted by [Hub.Restart]
// was disconnected with.
var ErrRestartRequested = errors.New("restart requested")

// Restart gives the upstream's connection up, as a lost connection is: a
// stdio child is stopped, and the upstream reconnects after the shortest
// backoff. An upstream not connected is retrying already; Restart leaves
// it be. An unknown name is an error.
func (h *Hub) Restart(name string) error {
	u, ok := h.set().byName[name]
	if !ok {
		return fmt.Errorf("restarting %s: no such upstream", name)
	}
	u.GiveUp(ErrRestartRequested)
	return nil
}

package proxy

import (
	"fmt"
	"log/slog"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxErrorSummaryBytes bounds the text of an upstream's failure that
// reaches the model: an HTTP error page or a stack trace is cut there, once,
// on one line, with a note of its length; the whole text (itself bounded by
// the error-body limit, and scrubbed) goes to the gateway's log.
const MaxErrorSummaryBytes = 512

// summarizeError is msg as the model sees it: control characters and runs of
// white space as one space, cut at MaxErrorSummaryBytes (on a character
// boundary) with a note saying how long it was. It reports whether msg
// was cut.
func summarizeError(msg string) (string, bool) {
	if len(msg) <= MaxErrorSummaryBytes && !strings.ContainsFunc(msg, unicode.IsControl) {
		return msg, false
	}
	var b strings.Builder
	space := false
	for _, r := range msg {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		if b.Len()+utf8.RuneLen(r) > MaxErrorSummaryBytes {
			return fmt.Sprintf("%s… (%d bytes in all; the whole text is in the gateway's log)", b.String(), len(msg)), true
		}
		b.WriteRune(r)
	}
	return b.String(), false
}

// logCut logs the whole text of an upstream's failure whose summary the
// model got.
func logCut(log *slog.Logger, upstream, tool, full string) {
	log.Warn("upstream error text cut for the model", "upstream", upstream, "tool", tool, "bytes", len(full), "err", full)
}

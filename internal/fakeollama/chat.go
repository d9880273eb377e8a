package fakeollama

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	s.chatCalls.Add(1)
	start := time.Now()
	if !s.wait(r, false) {
		return
	}
	var req ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.checkModel(w, req.Model) {
		return
	}
	if len(req.Messages) == 0 {
		// Ollama loads the model and answers at once, even when streaming.
		writeJSON(w, http.StatusOK, s.final(req, start, "load"))
		return
	}
	reply, err := s.opts.Chat(req)
	if err != nil {
		writeError(w, errorStatus(err), err.Error())
		return
	}
	if req.Stream != nil && !*req.Stream {
		c := s.final(req, start, "stop")
		c.Message.Content = reply
		c.EvalCount = len(pieces(reply))
		writeJSON(w, http.StatusOK, c)
		return
	}
	s.stream(w, req, start, reply)
}

// stream writes reply as Ollama streams: one chunk per word, each flushed,
// then a last empty chunk with done true and the metrics.
func (s *Server) stream(w http.ResponseWriter, req ChatRequest, start time.Time, reply string) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	parts := pieces(reply)
	for _, p := range parts {
		c := api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Message: api.Message{Role: "assistant", Content: p}}
		if enc.Encode(c) != nil {
			return // the client left
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	last := s.final(req, start, "stop")
	last.EvalCount = len(parts)
	_ = enc.Encode(last) // the client may have gone; nothing to do
}

// final returns the closing chunk of an answer, with done true.
func (s *Server) final(req ChatRequest, start time.Time, reason string) api.ChatResponse {
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(strings.Fields(m.Content)) + 1
	}
	return api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Message: api.Message{Role: "assistant"}, Done: true, DoneReason: reason,
		Metrics: api.Metrics{TotalDuration: max(time.Since(start), 1), PromptEvalCount: prompt}}
}

// pieces splits s into streaming chunks, each word with the spaces after
// it, so that joining them gives s back.
func pieces(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if isSpace(s[i-1]) && !isSpace(s[i]) {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func isSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\t' }

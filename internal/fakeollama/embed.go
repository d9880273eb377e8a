package fakeollama

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/ollama/ollama/api"
)

// trigramWeight is the weight of one character trigram relative to a whole
// word: enough that "files" lands near "file", too little for unrelated
// words that share a few letters to look alike.
const trigramWeight = 0.25

// stopWords carry no topic; dropping them keeps unrelated sentences apart.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "for": true,
	"from": true, "in": true, "on": true, "at": true, "by": true, "with": true,
	"and": true, "or": true, "is": true, "are": true, "be": true, "it": true,
	"this": true, "that": true, "as": true, "its": true, "into": true,
}

// Embed returns the fake embedding of text with dims dimensions: each
// lower-cased word (stop words dropped) adds ±1 to a bucket chosen by its
// hash, each character trigram of the word adds ±trigramWeight, and the
// sum is L2-normalised. Text without words embeds as the first unit
// vector. The result is deterministic, and texts sharing words have a high
// cosine.
func Embed(text string, dims int) []float32 {
	v := make([]float64, dims)
	for _, w := range words(text) {
		addFeature(v, "w:"+w, 1)
		r := []rune("^" + w + "$")
		for i := 0; i+3 <= len(r); i++ {
			addFeature(v, "t:"+string(r[i:i+3]), trigramWeight)
		}
	}
	return normalised(v)
}

// words returns the lower-cased words of text without stop words.
func words(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := fields[:0]
	for _, f := range fields {
		if !stopWords[f] {
			out = append(out, f)
		}
	}
	return out
}

// addFeature adds weight, signed by the feature's hash, to its bucket.
func addFeature(v []float64, feature string, weight float64) {
	h := fnv.New64a()
	h.Write([]byte(feature))
	sum := h.Sum64()
	if sum>>63 == 1 {
		weight = -weight
	}
	v[sum%uint64(len(v))] += weight
}

func normalised(v []float64) []float32 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	out := make([]float32, len(v))
	if ss == 0 {
		out[0] = 1
		return out
	}
	n := math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out
}

// embedRequest is what the fake reads of the body of POST /api/embed.
type embedRequest struct {
	Model      string          `json:"model"`
	Input      json.RawMessage `json:"input"` // a string or a list of strings
	Dimensions int             `json:"dimensions,omitempty"`
}

func (s *Server) handleEmbed(w http.ResponseWriter, r *http.Request) {
	s.embedCalls.Add(1)
	start := time.Now()
	if !s.wait(r, true) {
		return
	}
	if s.failEmbed.Load() {
		writeError(w, http.StatusInternalServerError, "fake embedding failure")
		return
	}
	var req embedRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.checkModel(w, req.Model) {
		return
	}
	inputs, ok := embedInputs(req.Input)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid input type")
		return
	}
	dims := Dims
	if req.Dimensions > 0 && req.Dimensions < dims {
		dims = req.Dimensions
	}
	resp := api.EmbedResponse{Model: req.Model, Embeddings: make([][]float32, 0, len(inputs))}
	for _, in := range inputs {
		resp.Embeddings = append(resp.Embeddings, Embed(in, dims))
		resp.PromptEvalCount += len(words(in)) + 1
	}
	s.embedTexts.Add(int64(len(inputs)))
	resp.TotalDuration = max(time.Since(start), 1)
	writeJSON(w, http.StatusOK, resp)
}

// embedInputs decodes the input field as Ollama does: absent or null is
// no input, an empty string is no input, a string is one, and a list
// must hold strings only.
func embedInputs(raw json.RawMessage) ([]string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one == "" {
			return nil, true
		}
		return []string{one}, true
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, false
	}
	return many, true
}

package routing

import (
	"encoding/json"
	"maps"
	"slices"
)

// field is one weighted part of a tool's document.
type field uint8

const (
	fieldName      field = iota // the tool name, identifier-split
	fieldDesc                   // the description
	fieldParam                  // parameter names, identifier-split
	fieldParamDesc              // parameter descriptions and enum values
	fieldDomain                 // the upstream and domain names
	numFields
)

// maxSchemaDepth bounds the schema walk; real schemas nest a few levels.
const maxSchemaDepth = 8

// analysed is a tool turned into terms, ready to post.
type analysed struct {
	tool  Tool
	terms []termTF // distinct terms and bigrams
	lens  [numFields]float32
}

// termTF is one distinct term of a document and its frequency per field.
type termTF struct {
	term string
	tf   fieldTF
}

// fieldTF is a term's frequency in each field of a document, at most 255.
type fieldTF [numFields]uint8

// analyse splits t into fields and counts its terms, in the order they
// first appear. counts is scratch space, by term its place in terms:
// analyseAll hands every tool of an upstream the same map, which keeps
// its buckets from tool to tool.
func (ix *Index) analyse(t Tool, counts map[string]int32) analysed {
	a := analysed{tool: t}
	clear(counts)
	count := func(i int32, f field) {
		if c := &a.terms[i].tf; c[f] < 255 {
			c[f]++
		}
	}
	bump := func(f field, term string) {
		i, ok := counts[term]
		if !ok {
			i = int32(len(a.terms))
			counts[term] = i
			a.terms = append(a.terms, termTF{term: term})
		}
		count(i, f)
	}
	// add counts the terms of one piece of text, and the bigrams of
	// adjacent terms in the name and description; a bigram's string is
	// made only when the tool has not had it yet.
	var bigram []byte
	add := func(f field, text string) {
		bigrams := ix.opts.BigramWeight > 0 && (f == fieldName || f == fieldDesc)
		prev := ""
		ix.docTok.each(text, func(term string, kind wordKind) {
			if bigrams && kind != wordJoined {
				if prev != "" {
					bigram = append(append(append(bigram[:0], prev...), ' '), term...)
					if i, ok := counts[string(bigram)]; ok {
						count(i, f)
					} else {
						bump(f, string(bigram))
					}
				}
				prev = term
			}
			bump(f, term)
			a.lens[f]++
		})
	}
	add(fieldName, t.Name)
	add(fieldDesc, t.Description)
	walkSchema(t.InputSchema, func(f field, text string) { add(f, text) })
	domain := domainOf(t)
	add(fieldDomain, domain)
	if t.Upstream != domain {
		add(fieldDomain, t.Upstream)
	}
	add(fieldDomain, t.Server)
	return a
}

// walkSchema calls emit with the parameter names (fieldParam) and their
// descriptions, titles and string enum values (fieldParamDesc) of a JSON
// Schema, nested ones too; a schema that does not decode gives nothing.
func walkSchema(raw json.RawMessage, emit func(field, string)) {
	if len(raw) == 0 {
		return
	}
	var s any
	if err := json.Unmarshal(raw, &s); err != nil {
		return
	}
	walkNode(s, 0, emit)
}

func walkNode(n any, depth int, emit func(field, string)) {
	m, ok := n.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(props)) {
			emit(fieldParam, name)
			walkParam(props[name], depth+1, emit)
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		walkNode(m[key], depth+1, emit)
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if alts, ok := m[key].([]any); ok {
			for _, alt := range alts {
				walkNode(alt, depth+1, emit)
			}
		}
	}
}

// walkParam emits the text of one parameter's schema and walks into it.
func walkParam(n any, depth int, emit func(field, string)) {
	m, ok := n.(map[string]any)
	if !ok {
		return
	}
	for _, key := range []string{"title", "description"} {
		if s, ok := m[key].(string); ok {
			emit(fieldParamDesc, s)
		}
	}
	if enum, ok := m["enum"].([]any); ok {
		for _, v := range enum {
			if s, ok := v.(string); ok {
				emit(fieldParamDesc, s)
			}
		}
	}
	walkNode(m, depth, emit)
}

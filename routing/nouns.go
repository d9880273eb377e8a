package routing

// Nouns name what a request is about; its other words mostly say how it
// is put ("can you find me the latest information on X"). So a request
// word counts in proportion to its use as a noun (wordnet.go): a word
// never used as one (find, latest) at nonNounWeight. Words WordNet does
// not know, and words some tool's name holds (list_files), count in full.

// nonNounWeight is the weight, relative to a noun, of a request word
// never used as a noun and absent from the catalog's tool names.
const nonNounWeight = 0.7

// wordWeight returns the weight of request word qt, whose group in the
// index starts with first (nil when the catalog lacks the word itself).
func (ix *Index) wordWeight(qt *queryTerm, first *resolvedTerm) float64 {
	if ix.opts.Off&OffNouns != 0 || first != nil && first.exact && first.alt == 1 && ix.inName[first.tid] {
		return 1
	}
	return 1 - (1-nonNounWeight)*float64(qt.relations().notNoun)/10
}

// relations returns the word's WordNet relations: from its expansions
// when the tokenizer kept them, else from the table.
func (qt *queryTerm) relations() wordRelations {
	if qt.ex != nil {
		return qt.ex.rel
	}
	return relationsOf(qt.term)
}

// buildInName marks, by term id, the terms that some tool's name holds;
// refresh calls it under the write lock.
func (ix *Index) buildInName() {
	in := make([]bool, len(ix.postings))
	for tid, tfs := range ix.fieldTFs {
		for _, tf := range tfs {
			if tf[fieldName] > 0 {
				in[tid] = true
				break
			}
		}
	}
	ix.inName = in
}

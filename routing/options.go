package routing

// FieldWeights holds one number per document field.
type FieldWeights struct {
	Name              float64 // the tool name, identifier-split
	Description       float64 // the tool description
	ParamNames        float64 // input parameter names, identifier-split, nested ones too
	ParamDescriptions float64 // parameter descriptions, titles and enum values
	Domain            float64 // the domain and upstream names
}

func (w FieldWeights) array() [numFields]float64 {
	return [numFields]float64{w.Name, w.Description, w.ParamNames, w.ParamDescriptions, w.Domain}
}

// IndexOptions configures an Index. The zero value is the tuned default;
// a zero field takes its default, documented on the field.
type IndexOptions struct {
	// Weights scale each field's term frequencies in BM25F. A zero weight
	// takes its default, a negative one turns the field off. Defaults:
	// Name 3, Description 1, ParamNames 1, ParamDescriptions 0.5, Domain 1.
	Weights FieldWeights
	// B is each field's length normalisation in [0, 1]; a zero takes the
	// default and a negative value means none (0). Defaults: Name 0.5,
	// Description 0.75, ParamNames 0.5, ParamDescriptions 0.4, Domain 0.5.
	B  FieldWeights
	K1 float64 // BM25's term-frequency saturation; default 1.2
	// SynonymWeight is the weight of a query term's lexicon synonyms
	// relative to the term itself; default 0.3, negative turns expansion off.
	SynonymWeight float64
	// BigramWeight is the weight of a pair of adjacent request words found
	// adjacent in a tool's name or description, relative to a single word;
	// default 0.4, negative turns phrase matching off (and bigrams are then
	// not indexed).
	BigramWeight float64
	// Diversity is λ of the xQuAD re-ranking of requests with several
	// clauses (see diversify.go): 0 ranks by the whole request alone, 1 by
	// clause coverage alone; default 0.5, negative turns it off.
	Diversity float64
	Tokenizer TokenizerOptions // configures how documents and queries are split into terms
	// Off turns heuristics off, for the ablation in routing/eval that
	// measures what each one pays; the zero value is every one on.
	Off Heuristics
}

// Heuristics is a set of the index's request heuristics, for
// IndexOptions.Off.
type Heuristics uint16

// The heuristics IndexOptions.Off can turn off.
const (
	OffValues       Heuristics = 1 << iota // files, addresses and names read as values (request.go)
	OffOperators                           // arithmetic and phrases rewritten as operations (request.go)
	OffDerived                             // WordNet derived forms (wordnet.go)
	OffTranslations                        // words of other languages translated (translate.go)
	OffNouns                               // non-nouns weighed down (nouns.go)
	OffNamed                               // a tool named for what is asked not abstained on (named.go)
)

var (
	defaultWeights = FieldWeights{Name: 3, Description: 1, ParamNames: 1, ParamDescriptions: 0.5, Domain: 1}
	defaultB       = FieldWeights{Name: 0.5, Description: 0.75, ParamNames: 0.5, ParamDescriptions: 0.4, Domain: 0.5}
)

// withDefaults returns o with every default applied and every "off"
// (negative) value turned into 0.
func (o IndexOptions) withDefaults() IndexOptions {
	o.Weights = o.Weights.or(defaultWeights)
	o.B = o.B.or(defaultB)
	o.K1 = orDefault(o.K1, 1.2)
	o.SynonymWeight = orDefault(o.SynonymWeight, 0.3)
	o.BigramWeight = orDefault(o.BigramWeight, 0.4)
	o.Diversity = orDefault(o.Diversity, 0.5)
	return o
}

func (w FieldWeights) or(def FieldWeights) FieldWeights {
	return FieldWeights{
		Name:              orDefault(w.Name, def.Name),
		Description:       orDefault(w.Description, def.Description),
		ParamNames:        orDefault(w.ParamNames, def.ParamNames),
		ParamDescriptions: orDefault(w.ParamDescriptions, def.ParamDescriptions),
		Domain:            orDefault(w.Domain, def.Domain),
	}
}

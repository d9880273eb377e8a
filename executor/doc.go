// Package executor validates and runs tool plans: a model hands the gateway
// a whole multi-step plan and gets every result back in one round trip.
//
// The proxy's run_plan tool (and the planner) decode a plan; the executor
// checks it against the catalog (Options.Lookup), derives its strategy from
// the dependency graph (decision 7 in docs/design.md) and runs it through a
// Caller, which the proxy implements. A step starts the moment its last
// dependency finishes. docs/plans.md describes plans for their authors.
//
// # References
//
// A string that is exactly "$<<id>>" or "$<<id.path>>" becomes that step's
// value, JSON type kept; inside longer text it is interpolated (strings as
// they are, other values as compact JSON). Paths are dotted, with decimal
// array indices. {"$ref": "id", "path": "/json/pointer"} is a whole-value
// reference with an RFC 6901 path; an object with other keys, or a "$ref"
// that is no step id (a JSON Schema's), is literal. "$$<<" is a literal
// "$<<", and so are an unclosed "$<<" and text without one; a "$<<...>>"
// that is not an id with a path is an error. The seeds' tight "${{id}}" is
// refused with a pointer to "$<<id>>" ("$${{" is a literal "${{", a spaced
// "${{ expr }}" is text). Object keys are never read.
//
// A step's value is its structuredContent, else its text parsed as JSON
// (numbers as json.Number), else the text. Substitution is one pass: text
// from a result is never scanned again.
//
// # foreach
//
// A step with "foreach": "$<<list>>" runs once per element, in order, at
// most Options.ForeachWidth at a time; "$<<item>>" is the element and
// "$<<index>>" its index (so neither can be a step id). Its value is the
// array of the elements' values; one failing element fails the step.
//
// # Validation
//
// Validate reports every problem at once, naming the step and the JSON path.
// Literal arguments are checked against the input schema with placeholders
// for references: errors a real value could change are ignored, structural
// ones ("required", types above a reference) are not. A reference path that
// cannot exist in the producer's output schema, or whose type cannot fit
// the argument, is an error; arguments built from references are checked
// again just before the call.
//
// # Timeouts and bounds
//
// Each call has its own deadline (Options.StepTimeout, or timeout_ms up to
// MaxStepTimeout) and each plan one (deadline_ms up to MaxDeadline). Run
// waits for every call it started. What references multiply is bounded
// before it is built (bound.go); a step past a bound fails with ErrLimit.
package executor

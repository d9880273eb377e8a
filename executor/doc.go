// Package executor validates and runs tool plans: a model hands the gateway
// a whole multi-step plan and gets every result back in one round trip.
//
// It sits between the proxy's run_plan tool (and the planner) and the
// proxy's Hub: the proxy decodes a plan, the executor checks it against the
// catalog (Options.Lookup), derives its strategy from the dependency graph
// (decision 7 in docs/design.md), and runs it through a Caller, which the proxy
// implements. Independent steps run in parallel; a step starts the moment
// its last dependency finishes.
//
// # References
//
// A string that is exactly "$<<id>>" or "$<<id.path>>" is replaced by that
// step's value with its JSON type kept. Inside longer text a reference is
// interpolated: strings as they are, other values as compact JSON. Paths are
// dotted, with decimal indices for arrays: "$<<search.items.0.place_id>>".
// The object {"$ref": "id", "path": "/json/pointer"} is a whole-value
// reference whose path is an RFC 6901 pointer (use it for keys that contain
// dots); an object is read as a reference only when its keys are "$ref" (a
// valid step id) and optionally "path", so a JSON Schema "$ref" such as
// "#/$defs/x" stays literal.
//
// "$$<<" is a literal "$<<". A "$<<" with no ">>" after it is literal, and
// so is any text without "$<<" ("$5", "#E1", "$<"). A "$<<...>>" whose
// inside is not a step id with an optional path is a validation error, not
// silently literal text. So is the seeds' "${{id}}" (or "${{id.path}}",
// written tight): it is refused with a pointer to "$<<id>>", never passed on
// literally; "$${{" is a literal "${{", and a spaced "${{ expr }}" (as in
// GitHub Actions) is text. References are read in the plan's string values,
// at any depth, but never in object keys.
//
// A step's value is its structuredContent, else its text content parsed as
// JSON, else that text. Numbers are kept as json.Number, so large integers
// pass through exactly. Substitution is one pass over the plan's literal
// arguments: text that comes from a result is never scanned again, so a
// result containing "$<<x>>" is passed on verbatim.
//
// # foreach
//
// A step with "foreach": "$<<list>>" (or a {"$ref": ...} object) runs once
// per element of that array, in element order, at most Options.ForeachWidth
// at a time. In its arguments "$<<item>>" (with an optional path) is the
// element and "$<<index>>" its zero-based index; "item" and "index" are
// therefore reserved and cannot be step ids. The step's value is the array
// of per-element values, and any element failing fails the step.
//
// # Validation
//
// Validate reports every problem at once, each naming the step and the JSON
// path of the argument. Literal arguments are checked against the tool's
// input schema with each reference replaced by a placeholder: an error that
// a real value at a placeholder could change is ignored (errors at or below
// it, and value-dependent keywords such as enum or anyOf above it), while
// "required" and other structural errors are still reported. When the
// producing tool declares an output schema, a reference path that cannot
// exist in it, or whose declared type cannot fit the consuming argument's
// declared type, is a validation error; otherwise paths are checked at run
// time, and arguments built from references are validated against the
// input schema just before the call.
//
// # Timeouts and cancellation
//
// Each call gets its own deadline (Options.StepTimeout, or the step's
// timeout_ms up to Options.MaxStepTimeout; for a foreach step, each
// element's call), and every plan a deadline (deadline_ms, at most
// Options.MaxDeadline, which is also the default). The Caller must return
// soon after its ctx is done: Run waits for every call it started, so no
// goroutine outlives it.
//
// # Bounds
//
// References multiply values, so what a run builds is bounded before it is
// built (bound.go): each interpolated string (Options.MaxTextBytes), the
// arguments of all the plan's calls (MaxExpandedBytes), the elements of a
// foreach step (MaxForeachItems), the calls of the plan (MaxCalls), and
// the results it keeps and its output (MaxResultBytes). A step past one
// fails with ErrLimit.
package executor

// Package fuse decides which tools go on the belt for one turn.
//
// It sits between routing and the proxy: the planner's main router states a
// route and the tools the model believes it needs, the query router in
// package routing scores catalog tools, and [Fuse] merges the two under a
// [Policy] (the profile's routing.fuse section) into the final tool list
// the proxy shows the client. [Breaker] decides, per session, whether the
// request_more_tools discovery tool stays on the belt.
//
// Everything here is pure logic: no I/O, no logging, no goroutines.
package fuse

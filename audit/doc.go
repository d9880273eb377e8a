// Package audit keeps one record per tool call: who called what, through
// which route, how it ended, how long it took and how many bytes went each
// way. It never records argument values or results, which may hold
// secrets.
//
// A Log takes records without blocking (a bounded queue, dropped and
// counted when full) and one goroutine it owns writes them to a rotated
// JSON-lines file and to a Store.
package audit

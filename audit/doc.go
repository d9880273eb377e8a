// Package audit keeps one record per tool call: who called what, through
// which route, how it ended, how long it took and how many bytes went each
// way. It never records argument values or results, which may hold
// secrets.
//
// A Log queues records and writes them in batches to a rotated JSON-lines
// file and to a Store, off the callers' path.
package audit

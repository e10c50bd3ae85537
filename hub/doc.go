// Package hub shares a device owner's routines with the owners of a person's other devices
// through a NATS JetStream key-value bucket, so that each slot of a shared routine runs on one
// device (docs/design.md#9-devices). It is the client side only: the embedded server that
// `routinely hub` runs is package hub/hubserver, which only that command and tests import.
//
// The bucket (Bucket) holds four kinds of keys:
//
//	claim.<routine>.<slot unix ns>  the hub claim of one slot: created once, by the device that runs it
//	run.<routine>                   the run in progress of a routine, on whichever device
//	device.<id>                     a device's liveness (per-key TTL) and what it reports; its id (LoadID)
//	                                is kept in its state directory, its name is a label
//	anchor.<routine>                the shared grid anchor of an `every` routine
//
// Client implements scheduler.Coordinator.
package hub

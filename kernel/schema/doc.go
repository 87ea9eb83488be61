// Package schema is the typed contract of a graph: its node types and edge
// types, their properties, and the out-edge cardinality of each edge type.
//
// A schema is defined with Go literals or parsed from a small text form:
//
//	node Person  { name: string  born: timestamp? }
//	node Company { name: string }
//	edge WorksAt: Person -> Company @card(0..1) { since: timestamp? }
//
// Every node type has the implicit required string key `id`; every edge type
// has `id`, `from` and `to`. A property is required unless marked "?".
//
// Validate checks the rules (unique names, edges between existing node
// types, sane cardinalities, reserved names). Parse is strict and returns a
// *ParseError that points at the line. Contract returns the canonical bytes
// the graph stores at Init, and ContractID their stable identity (sha256).
// Decode reads contract bytes back and accepts only the canonical form.
//
// The package is pure: no I/O, no clock, no goroutines; map iteration never
// reaches its output.
package schema

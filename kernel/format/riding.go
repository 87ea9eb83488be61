package format

import (
	"fmt"
	"strings"
)

// Bounds on table versions that ride their manifest (format 11,
// docs/format.md "v10->v11").
const (
	// MaxRidingVersionBytes bounds one riding version's payload: a larger
	// version is written as an object.
	MaxRidingVersionBytes = 16 << 10
	// MaxRidingManifestBytes bounds the riding payloads a write may leave
	// in the manifest it publishes: a new version rides only if the
	// manifest's riding bytes stay within it (RidingFitsWithin). A manifest
	// may exceed it only by versions it inherited (a fork copies its
	// source's pins), so every manifest stays within MaxTables riding
	// versions of MaxRidingVersionBytes each.
	MaxRidingManifestBytes = 32 << 10
)

// RidingPayload returns the payload t rides its manifest with: the
// canonical JSON of its object, without the envelope. t must be a named
// version that preserves no other (a compaction keeps an object, so the
// based_on chains PinSatisfied walks never pass a riding version) and
// must be valid.
func RidingPayload(t *TableVersion) (string, error) {
	if t.Attempt == (ID{}) || t.ContentPreserving {
		return "", corrupt("table-version", "only a named, not content-preserving version rides its manifest")
	}
	if err := ValidateTableVersion(t); err != nil {
		return "", err
	}
	return string(appendTableVersion(make([]byte, 0, tableVersionBytes(t)), t)), nil
}

// RidingVersion decodes the version pin rides with (pin.Riding, which must
// be set) and checks that it is the version the pin names: same table,
// fork, number and attempt, the pinned row count, named, not
// content-preserving, within MaxRidingVersionBytes. The result has Rides
// set. Anything else matches ErrCorrupt.
func RidingVersion(pin TablePin) (TableVersion, error) {
	bad := func(f string, a ...any) error {
		return corrupt("manifest", "table %q rides: %s", pin.Name, fmt.Sprintf(f, a...))
	}
	if pin.Riding == "" {
		return TableVersion{}, bad("no payload")
	}
	if len(pin.Riding) > MaxRidingVersionBytes {
		return TableVersion{}, bad("%d bytes exceeds %d", len(pin.Riding), MaxRidingVersionBytes)
	}
	var t TableVersion
	if err := decodeTableVersionPayload([]byte(pin.Riding), &t); err != nil {
		return TableVersion{}, bad("%v", err)
	}
	if err := ValidateTableVersion(&t); err != nil {
		return TableVersion{}, bad("%v", err)
	}
	if t.Table != pin.Name || t.Fork != pin.Fork || t.Version != pin.Version || t.Attempt != pin.Attempt || t.Rows != pin.Rows {
		return TableVersion{}, bad("payload names %s/%s/%d/%s (%d rows), the pin %s/%d/%s (%d rows)",
			t.Table, t.Fork, t.Version, t.Attempt, t.Rows, pin.Fork, pin.Version, pin.Attempt, pin.Rows)
	}
	if t.Attempt == (ID{}) || t.ContentPreserving {
		return TableVersion{}, bad("a counter-named or content-preserving version")
	}
	t.Rides = true
	return t, nil
}

// RidingBytes returns the riding payload bytes pins carry.
func RidingBytes(pins []TablePin) int {
	n := 0
	for _, p := range pins {
		n += len(p.Riding)
	}
	return n
}

// RidingBounds returns a writer's riding budget as the bounds a manifest
// is held to: each of version and manifest bytes that is 0 (unset) or
// above the format's maximum is the maximum. Writers resolve theirs once
// (kernel.Options.RidingBudget); checkers of what writers left use this.
func RidingBounds(version, manifest int) (int, int) {
	if version <= 0 || version > MaxRidingVersionBytes {
		version = MaxRidingVersionBytes
	}
	if manifest <= 0 || manifest > MaxRidingManifestBytes {
		manifest = MaxRidingManifestBytes
	}
	return version, manifest
}

// RidingFitsWithin reports whether a manifest whose pins carry riding
// payloads of carried bytes (the ones a write keeps) may take a new
// riding version of add bytes under a writer's budget: a version of at
// most version bytes, a manifest of at most manifest riding bytes (each
// at most the format's maximum: a writer may ride less, never more;
// kernel.Options.RidingBudget). A pure decision on the loaded head (the
// publish repeats it on the head it builds on, lineage.RidingOverBudget).
// Readers never see the budget: anything within the maxima reads.
func RidingFitsWithin(version, manifest, carried, add int) bool {
	return add > 0 && add <= min(version, MaxRidingVersionBytes) && carried+add <= min(manifest, MaxRidingManifestBytes)
}

// checkRidingFrame is the cheap check ValidatePins makes of a riding pin
// on every encode (the assertion before each publish) and decode: the
// payload is within MaxRidingVersionBytes and its canonical frame names
// the pin — it opens with the pin's table, fork and number, holds the
// pin's row count (an unescaped "rows" key occurs only as the version's
// own: quotes inside strings are escaped), ends with the pin's attempt,
// and is not content-preserving. The payload is decoded whole when the
// version is read (RidingVersion: ReadPinned, the collector's marking,
// verify), as an object's bytes are checked when it is read; decoding
// every payload on every manifest read made the simulator's runs about 3x
// slower (a collection reads every retained manifest).
func checkRidingFrame(p TablePin) error {
	bad := func(f string, a ...any) error { return fmt.Errorf("table %q rides: %s", p.Name, fmt.Sprintf(f, a...)) }
	if len(p.Riding) > MaxRidingVersionBytes {
		return bad("%d bytes exceeds %d", len(p.Riding), MaxRidingVersionBytes)
	}
	if p.Attempt == (ID{}) {
		return bad("a counter-named version")
	}
	// The three pieces, built in one buffer (on the stack for a name of
	// up to ~100 bytes): this runs for every riding pin on every encode
	// and decode of a manifest.
	var buf [256]byte
	b := appendFixed(append(appendID(append(appendString(append(buf[:0], `{"table":`...), p.Name), `,"fork":`...), p.Fork), `,"version":`...), p.Version)
	nHead := len(b)
	b = append(appendID(append(b, `,"attempt":`...), p.Attempt), '}')
	nTail := len(b)
	b = appendFixed(append(b, `,"rows":`...), p.Rows)
	head, tail, rows := b[:nHead], b[nHead:nTail], b[nTail:]
	r := p.Riding
	if len(r) < len(head) || r[:len(head)] != string(head) || len(r) < len(tail) || r[len(r)-len(tail):] != string(tail) ||
		!strings.Contains(r, string(rows)) {
		return bad("the payload does not name the pin's table, fork, version, rows and attempt")
	}
	if strings.Contains(p.Riding, `"content_preserving":true`) {
		return bad("a content-preserving version")
	}
	return nil
}

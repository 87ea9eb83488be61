package format

import (
	"encoding/json"
	"strings"

	"github.com/oklog/ulid/v2"
)

// KindCollection is the envelope kind of a collection record (docs/gc.md
// rule 6). Values are part of the on-store format: never renumber.
const KindCollection Kind = 13

// The states of a collection record.
const (
	// CollectionLoading: the collector is reading the root set; it has
	// decided nothing and deletes nothing.
	CollectionLoading = "loading"
	// CollectionDeleting: the collector decided; Plan holds every manifest
	// it may delete. It re-lists the leases after writing this state and
	// deletes no manifest a lease written before that re-list holds.
	CollectionDeleting = "deleting"
)

// MaxPlanRanges bounds a collection record's plan (a collection that would
// delete more ranges stops before deleting, maintain.ErrTooLarge).
const MaxPlanRanges = 1 << 16

// PlanRange is a run of one incarnation's manifest versions, From through
// To inclusive.
type PlanRange struct {
	Branch      string
	Incarnation uint64
	From, To    uint64
}

// Collection is the record R/gc/<id> of one running collection: written
// create-only in state loading before it reads any root, overwritten by
// its own collector with state deleting and the plan before it deletes,
// deleted when it ends. A record whose expiry passed by more than its skew
// margin is stale: its collector stopped deleting (it stops at its expiry
// minus the margin), and a later collection deletes it.
type Collection struct {
	ID              ID          `json:"id"`
	State           string      `json:"state"`
	ExpiresUnixNano int64       `json:"expires_unix_nano"`
	SkewMarginNanos int64       `json:"skew_margin_nanos"`
	Plan            []PlanRange `json:"plan,omitempty"`
}

// planRangeJSON mirrors PlanRange with fixed-width counters.
type planRangeJSON struct {
	Branch      string   `json:"branch"`
	Incarnation fixedU64 `json:"incarnation"`
	From        fixedU64 `json:"from"`
	To          fixedU64 `json:"to"`
}

// MarshalJSON emits the range with fixed-width counters.
func (r PlanRange) MarshalJSON() ([]byte, error) {
	return json.Marshal(planRangeJSON{r.Branch, fixedU64(r.Incarnation), fixedU64(r.From), fixedU64(r.To)})
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (r *PlanRange) UnmarshalJSON(data []byte) error {
	var s planRangeJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*r = PlanRange{s.Branch, uint64(s.Incarnation), uint64(s.From), uint64(s.To)}
	return nil
}

// EncodeCollection validates c and returns its enveloped canonical bytes.
func EncodeCollection(c *Collection, token Token) ([]byte, error) {
	if err := ValidateCollection(c); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return nil, corrupt("collection", "marshal: %v", err)
	}
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindCollection, Token: token, Payload: payload}), nil
}

// DecodeCollection decodes and validates an enveloped collection record.
func DecodeCollection(b []byte) (Collection, Token, error) {
	e, err := openRecovery(b, KindCollection)
	if err != nil {
		return Collection{}, Token{}, err
	}
	var c Collection
	if err := decodeCanonical("collection", e.Payload, &c); err != nil {
		return Collection{}, Token{}, err
	}
	if err := ValidateCollection(&c); err != nil {
		return Collection{}, Token{}, err
	}
	return c, e.Token, nil
}

// ValidateCollection checks the structural rules of a collection record:
// an id, a known state, a plan only when deleting, bounded, each range a
// valid name with From <= To.
func ValidateCollection(c *Collection) error {
	bad := func(f string, a ...any) error { return corrupt("collection", f, a...) }
	switch {
	case c.ID == (ID{}):
		return bad("zero id")
	case c.State != CollectionLoading && c.State != CollectionDeleting:
		return bad("state %q", c.State)
	case c.State == CollectionLoading && len(c.Plan) > 0:
		return bad("a plan in state loading")
	case len(c.Plan) > MaxPlanRanges:
		return bad("%d plan ranges (max %d)", len(c.Plan), MaxPlanRanges)
	case c.SkewMarginNanos < 0:
		return bad("negative skew margin")
	}
	for _, r := range c.Plan {
		if err := ValidateName(r.Branch); err != nil || r.Incarnation == 0 || r.From > r.To {
			return bad("plan range %+v", r)
		}
	}
	return nil
}

// CollectionPrefix is the prefix of every collection record.
func (k Keys) CollectionPrefix() string { return k.join("gc") + "/" }

// Collection is the key of the collection record id.
func (k Keys) Collection(id ID) string { return k.join("gc", id.String()) }

// ParseCollectionKey returns the id of a key under CollectionPrefix.
func (k Keys) ParseCollectionKey(key string) (ID, error) {
	rest, ok := strings.CutPrefix(key, k.CollectionPrefix())
	if !ok {
		return ID{}, corrupt("key", "%q is not under %q", key, k.CollectionPrefix())
	}
	id, err := ulid.ParseStrict(rest)
	if err != nil || id.String() != rest {
		return ID{}, corrupt("key", "collection key %q does not end in an id", key)
	}
	return id, nil
}

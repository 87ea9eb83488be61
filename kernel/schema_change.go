package kernel

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// WriterKindSchema is the writer kind of a schema change that writes
// tables in its own commit (a type dropped with its rows): recovery rolls
// such a write back, never forward, since a recovery commit cannot carry
// the new schema.
const WriterKindSchema = "schema"

// ErrSchemaChanged matches *SchemaChangedError.
var ErrSchemaChanged = errors.New("kernel: branch schema changed")

// SchemaChangedError says a publish (or Write) with
// LineageIntent.ExpectSchema found the branch under another schema: the
// write was validated against Expected and must not land under Actual.
// Nothing was published; begin again under the new schema and retry.
type SchemaChangedError struct {
	Branch   string
	Expected string // sha256 hex of the schema the caller validated against
	Actual   string // sha256 hex of the schema the branch head names
}

// Error implements error.
func (e *SchemaChangedError) Error() string {
	return fmt.Sprintf("kernel: branch %q: schema changed from %s to %s (begin again under the new schema and retry)",
		e.Branch, short(e.Expected), short(e.Actual))
}

// Is makes errors.Is(err, ErrSchemaChanged) hold.
func (e *SchemaChangedError) Is(target error) bool { return target == ErrSchemaChanged }

// Retryable reports true: a fresh transaction under the new schema may
// succeed.
func (e *SchemaChangedError) Retryable() bool { return true }

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// PutSchema stores schema contract bytes create-only under their sha256
// (content-addressed: an existing object with the same bytes stands) and
// returns the sum. A schema change stores its contract first, then
// publishes a manifest naming it (LineageIntent.NewSchema): an object
// nobody names yet is invisible, so the publish stays the one door.
func (g *Graph) PutSchema(ctx context.Context, contract []byte) (string, error) {
	if err := g.checkWritable("put schema"); err != nil {
		return "", err
	}
	if len(contract) == 0 || len(contract) > format.MaxPayloadBytes {
		return "", fmt.Errorf("put schema: %w: contract of %d bytes", ErrInvalidArgument, len(contract))
	}
	return g.writeSchema(ctx, contract)
}

// ReadSchema returns the schema contract bytes stored under sha256 hex sum.
func (g *Graph) ReadSchema(ctx context.Context, sum string) ([]byte, error) {
	return g.readSchema(ctx, sum)
}

// checkSchemaIntent validates the schema fields of an intent: NewSchema
// needs ExpectSchema (a change is planned against a schema in force), and
// both are sha256 hex.
func checkSchemaIntent(intent LineageIntent) error {
	if intent.NewSchema != "" && intent.ExpectSchema == "" {
		return fmt.Errorf("%w: NewSchema without ExpectSchema", ErrInvalidArgument)
	}
	for _, s := range []string{intent.ExpectSchema, intent.NewSchema} {
		if s != "" && !format.IsSchemaSum(s) {
			return fmt.Errorf("%w: schema %q is not 64 lowercase hex digits", ErrInvalidArgument, s)
		}
	}
	return nil
}

// checkSchema refuses a head whose schema is not the one the request was
// validated against (LineageIntent.ExpectSchema).
func checkSchema(req *publishReq, head *format.Manifest) error {
	if req.expectSchema == "" || head.Schema == req.expectSchema {
		return nil
	}
	if plant.Enabled(plant.StaleSchemaValidate) && req.newSchema == "" { // planted bug: a data write ignores the schema it was validated against
		return nil
	}
	return &SchemaChangedError{Branch: head.Branch.Name, Expected: req.expectSchema, Actual: head.Schema}
}

// schemaMovedSince reports whether the schema of the branch head differs
// from the one of the manifest a sidecar's write was planned on (or that
// manifest is gone): recovery then never rolls the write forward, since
// it was validated against another schema.
func (g *Graph) schemaMovedSince(ctx context.Context, s *format.Sidecar, head *format.Manifest) (bool, error) {
	base, err := g.manifestAt(ctx, format.ManifestRef{Branch: s.Branch.Name, Incarnation: s.Branch.Incarnation, Version: s.BaseManifest})
	if errors.Is(err, ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return base.m.Schema != head.Schema, nil
}

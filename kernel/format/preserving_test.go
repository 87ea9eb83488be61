package format

import (
	"errors"
	"strings"
	"testing"
)

// TestContentPreservingMark pins the on-store mark of a maintenance
// version: omitted when false (a version written before the field existed
// decodes byte-exactly and re-encodes to the same bytes), present as
// "content_preserving":true otherwise, and only with based_on.
func TestContentPreservingMark(t *testing.T) {
	fork := ID{1}
	old := `{"table":"people","fork":"` + fork.String() + `","version":"00000000000000000002","fragments":["a"],"rows":"00000000000000000001","based_on":{"fork":"` + fork.String() + `","version":"00000000000000000001"}}`
	tv, _, err := DecodeTableVersion(reframe(CurrentFormat, KindTableVersion, old))
	if err != nil || tv.ContentPreserving {
		t.Fatalf("old object: %+v, %v", tv, err)
	}
	tv.ContentPreserving = true
	b, err := EncodeTableVersion(&tv, Token{})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := DecodeEnvelope(b)
	if want := strings.TrimSuffix(old, "}") + `,"content_preserving":true}`; string(e.Payload) != want {
		t.Fatalf("payload\n%s\nwant\n%s", e.Payload, want)
	}
	tv.BasedOn = nil
	if _, err := EncodeTableVersion(&tv, Token{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("content-preserving without based_on: %v, want ErrCorrupt", err)
	}
	explicitFalse := strings.TrimSuffix(old, "}") + `,"content_preserving":false}`
	if _, _, err := DecodeTableVersion(reframe(CurrentFormat, KindTableVersion, explicitFalse)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("non-canonical explicit false: %v, want ErrCorrupt", err)
	}
}

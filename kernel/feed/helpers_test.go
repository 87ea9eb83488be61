package feed

import (
	"crypto/sha256"
	"encoding/base64"
	"testing"
)

func mustRaw(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func appendSum(body []byte) []byte {
	sum := sha256.Sum256(body)
	return append(body, sum[:checksumBytes]...)
}

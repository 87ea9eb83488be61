package objstore

import (
	"errors"
	"strings"
	"testing"
)

// The key rules every backend enforces before I/O.
func TestValidateKey(t *testing.T) {
	tests := []struct {
		key string
		ok  bool
	}{
		{"a", true},
		{"a/b/c", true},
		{"graphs/g1/branches/main/00000000000000000001", true},
		{"ünïcode/κλειδί", true},
		{"..a/b..", true},
		{strings.Repeat("k", MaxKeyBytes), true},
		{"", false},
		{"/a", false},
		{"a/", false},
		{"a//b", false},
		{".", false},
		{"..", false},
		{"a/./b", false},
		{"a/../b", false},
		{"a\x00b", false},
		{"a\nb", false},
		{"a\x7fb", false},
		{"a\u0085b", false},
		{"\xff\xfe", false},
		{strings.Repeat("k", MaxKeyBytes+1), false},
	}
	for _, tc := range tests {
		err := ValidateKey(OpPut, tc.key)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateKey(%q) = %v, want ok=%v", tc.key, err, tc.ok)
		}
		if err != nil {
			var oe *Error
			if !errors.As(err, &oe) || oe.Op != OpPut || oe.Key != tc.key || !errors.Is(err, ErrInvalidKey) {
				t.Errorf("ValidateKey(%q) error %#v lacks op/key/kind", tc.key, err)
			}
		}
	}
}

func TestValidatePrefix(t *testing.T) {
	tests := []struct {
		prefix string
		ok     bool
	}{
		{"", true},
		{"a", true},
		{"a/", true},
		{"a/b", true},
		{"a/.", true},  // may grow into "a/.x"
		{"a/..", true}, // may grow into "a/..x"
		{"/", false},
		{"a//", false},
		{"a/../b", false},
		{"a\x00", false},
	}
	for _, tc := range tests {
		err := ValidatePrefix(OpList, tc.prefix)
		if (err == nil) != tc.ok {
			t.Errorf("ValidatePrefix(%q) = %v, want ok=%v", tc.prefix, err, tc.ok)
		}
	}
}

// An ambiguous error matches its kind and ErrAmbiguous; a plain one only its
// kind. Callers rely on this to decide between retrying and reading back.
func TestErrorMatching(t *testing.T) {
	cause := errors.New("socket reset")
	amb := NewAmbiguousError(OpPut, "k", ErrTransient, cause)
	plain := NewError(OpGet, "k", ErrNotFound, nil)
	checks := []struct {
		name string
		got  bool
		want bool
	}{
		{"ambiguous is transient", errors.Is(amb, ErrTransient), true},
		{"ambiguous is ambiguous", IsAmbiguous(amb), true},
		{"ambiguous keeps cause", errors.Is(amb, cause), true},
		{"ambiguous is retryable", IsRetryable(amb), true},
		{"not-found is not ambiguous", IsAmbiguous(plain), false},
		{"not-found is not retryable", IsRetryable(plain), false},
		{"not-found is not-found", errors.Is(plain, ErrNotFound), true},
		{"conflict is retryable", IsRetryable(NewError(OpPut, "k", ErrConflict, nil)), true},
		{"precondition is final", IsRetryable(NewError(OpPut, "k", ErrPreconditionFailed, nil)), false},
		{"rejected is final", IsRetryable(NewError(OpPut, "k", ErrRejected, nil)), false},
		{"rejected is rejected", errors.Is(NewError(OpGet, "k", ErrRejected, cause), ErrRejected), true},
		{"rejected is not transient", errors.Is(NewError(OpGet, "k", ErrRejected, cause), ErrTransient), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if msg := amb.Error(); !strings.Contains(msg, "put") || !strings.Contains(msg, "ambiguous") {
		t.Errorf("message %q lacks op or ambiguity", msg)
	}
}

func TestClampLimit(t *testing.T) {
	for in, want := range map[int]int{-1: MaxListLimit, 0: MaxListLimit, 1: 1, 999: 999, MaxListLimit + 1: MaxListLimit} {
		if got := ClampLimit(in); got != want {
			t.Errorf("ClampLimit(%d) = %d, want %d", in, got, want)
		}
	}
}

package objstore

import (
	"strings"
	"unicode/utf8"
)

// MaxKeyBytes is the longest key, in bytes, any backend accepts.
const MaxKeyBytes = 1024

// ValidateKey checks the key rules every backend enforces before any I/O:
// valid UTF-8, 1..MaxKeyBytes bytes, no leading '/', no empty segment (so no
// "//" and no trailing '/'), no "." or ".." segment, and no NUL or other
// control character. It returns an *Error of kind ErrInvalidKey naming op.
func ValidateKey(op Op, key string) error {
	if reason := keyProblem(key); reason != "" {
		return &Error{Op: op, Key: key, Kind: ErrInvalidKey, Err: errString(reason)}
	}
	return nil
}

// ValidatePrefix checks a List prefix. A prefix is any leading part of a
// valid key: it may be empty and may end with '/', but must otherwise obey
// the key rules.
func ValidatePrefix(op Op, prefix string) error {
	if prefix == "" {
		return nil
	}
	probe := prefix
	if strings.HasSuffix(probe, "/") {
		probe += "x"
	}
	// A trailing partial segment "." or ".." could still grow into a valid
	// segment ("..a"), so only complete segments are held to the dot rule.
	if i := strings.LastIndexByte(probe, '/'); i >= 0 {
		last := probe[i+1:]
		if last == "." || last == ".." {
			probe = probe[:i+1] + "x"
		}
	} else if probe == "." || probe == ".." {
		probe = "x"
	}
	if reason := keyProblem(probe); reason != "" {
		return &Error{Op: op, Key: prefix, Kind: ErrInvalidKey, Err: errString("prefix: " + reason)}
	}
	return nil
}

func keyProblem(key string) string {
	switch {
	case key == "":
		return "empty key"
	case len(key) > MaxKeyBytes:
		return "longer than 1024 bytes"
	case !utf8.ValidString(key):
		return "not valid UTF-8"
	case strings.HasPrefix(key, "/"):
		return "leading '/'"
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return "control character"
		}
	}
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "":
			return "empty segment"
		case ".", "..":
			return "'.' or '..' segment"
		}
	}
	return ""
}

type errString string

func (e errString) Error() string { return string(e) }

package schema

import (
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// MaxDefaultBytes bounds the text of a property default (its literal, as
// written in the contract).
const MaxDefaultBytes = 1024

// ParseDefault parses the text of a default literal for a property of kind
// k and returns its value and canonical text (the form a contract stores):
//
//	string, bytes   a double-quoted Go string literal ("a\n", "\x00"); a
//	                string must be valid UTF-8; canonical: strconv.QuoteToASCII
//	int64, int32    a decimal integer in the kind's range (-5); canonical: no
//	                sign for positives, no leading zeros
//	float64         a decimal or exponent float, finite (1.5, -2e10);
//	                canonical: strconv.FormatFloat(f, 'g', -1, 64)
//	bool            true or false
//	timestamp       a double-quoted RFC 3339 instant ("2024-01-02T03:04:05Z");
//	                canonical: UTC, RFC 3339 with nanoseconds, trailing zeros
//	                dropped
//
// The value's Go type is string, []byte, int64, int32, float64, bool or
// time.Time by kind. A malformed literal is an error naming the kind.
func ParseDefault(k Kind, text string) (any, string, error) {
	if len(text) > MaxDefaultBytes {
		return nil, "", fmt.Errorf("default of %d bytes, more than the limit %d", len(text), MaxDefaultBytes)
	}
	bad := func(why string) (any, string, error) {
		return nil, "", fmt.Errorf("default %s is not a %s literal: %s", text, k, why)
	}
	switch k {
	case String, Bytes, Timestamp:
		if len(text) < 2 || text[0] != '"' {
			return bad("want a double-quoted string")
		}
		s, err := strconv.Unquote(text)
		if err != nil {
			return bad(err.Error())
		}
		switch k {
		case String:
			if !utf8.ValidString(s) {
				return bad("not valid UTF-8")
			}
			return s, strconv.QuoteToASCII(s), nil
		case Bytes:
			return []byte(s), quoteBytes(s), nil
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return bad(err.Error())
		}
		t = t.UTC()
		return t, strconv.Quote(t.Format(time.RFC3339Nano)), nil
	case Int64, Int32:
		bits := 64
		if k == Int32 {
			bits = 32
		}
		n, err := strconv.ParseInt(text, 10, bits)
		if err != nil {
			return bad("want a decimal integer in range")
		}
		if k == Int32 {
			return int32(n), strconv.FormatInt(n, 10), nil
		}
		return n, strconv.FormatInt(n, 10), nil
	case Float64:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return bad("want a finite number")
		}
		return f, strconv.FormatFloat(f, 'g', -1, 64), nil
	case Bool:
		b, err := strconv.ParseBool(text)
		if err != nil || (text != "true" && text != "false") {
			return bad("want true or false")
		}
		return b, strconv.FormatBool(b), nil
	}
	return bad("invalid kind")
}

// quoteBytes quotes arbitrary bytes as a Go string literal, ASCII only
// (invalid UTF-8 as \x escapes).
func quoteBytes(s string) string {
	if utf8.ValidString(s) {
		return strconv.QuoteToASCII(s)
	}
	out := []byte{'"'}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			out = append(out, fmt.Sprintf(`\x%02x`, s[i])...)
			i++
			continue
		}
		q := strconv.QuoteToASCII(s[i : i+n])
		out = append(out, q[1:len(q)-1]...)
		i += n
	}
	return string(append(out, '"'))
}

// DefaultValue returns the value of p's default (see ParseDefault) and
// whether it has one. The default of a validated property always parses.
func (p Property) DefaultValue() (any, bool) {
	if p.Default == "" {
		return nil, false
	}
	v, _, err := ParseDefault(p.Kind, p.Default)
	if err != nil {
		panic(fmt.Sprintf("schema: property %s has an invalid default (schema not validated?): %v", p.Name, err))
	}
	return v, true
}

// defaultProblem returns why p's default is not a canonical literal of its
// kind, or "".
func defaultProblem(p Property) string {
	if p.Default == "" {
		return ""
	}
	_, canon, err := ParseDefault(p.Kind, p.Default)
	switch {
	case err != nil:
		return err.Error()
	case canon != p.Default:
		return fmt.Sprintf("default %s is not in canonical form %s", p.Default, canon)
	}
	return ""
}

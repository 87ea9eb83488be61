package feed

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// TokenVersion is the layout version of the tokens this build writes and
// reads (docs/format.md, "Change feed tokens").
const TokenVersion = 1

// MaxTokenBytes bounds an encoded token; a longer string is refused before
// decoding.
const MaxTokenBytes = 4096

// maxResumeIDBytes bounds the resume id (data.MaxIDBytes is 256).
const maxResumeIDBytes = 1024

// TokenKind says what a token is for.
type TokenKind uint8

// The token kinds.
const (
	// KindCursor points at a commit boundary of a branch's chain: every
	// commit up to and including Last was delivered whole.
	KindCursor TokenKind = iota + 1
	// KindPage continues a commit (At) of a branch's chain that a page
	// ended inside, at Resume.
	KindPage
	// KindCommitPage continues CommitChanges of one commit (At) at Resume;
	// its Binding names no branch.
	KindCommitPage
)

// ID is a raw 16-byte identifier (a commit or incarnation ULID).
type ID [16]byte

// IsZero reports whether id is all zero bytes.
func (id ID) IsZero() bool { return id == ID{} }

// Binding is what a token is bound to: the graph (its genesis commit), the
// branch name and incarnation, and the filter digest. A token is only
// accepted with the binding it was issued under.
type Binding struct {
	Graph       ID
	Branch      string // "" for KindCommitPage
	Incarnation ID     // zero for KindCommitPage
	Filter      Digest
}

// Point is one commit and the manifest that introduced it: the incarnation
// (branch name and number) and the manifest version. The zero Point is
// "before the first commit".
type Point struct {
	Commit      ID
	Branch      string
	Incarnation uint64
	Version     uint64
}

// IsZero reports whether p is the zero Point.
func (p Point) IsZero() bool { return p == Point{} }

// Resume is a place inside one commit's ordered changes: continue with type
// Type after id After ("" = from its first change).
type Resume struct {
	Type  string
	After string
}

// Token is a decoded cursor or page token.
type Token struct {
	Kind TokenKind
	Binding
	// Last is the last commit delivered whole (zero: none yet). Cursor and
	// page tokens.
	Last Point
	// At is the commit being delivered (page and commit-page tokens).
	At Point
	// Resume is where inside At to continue (page and commit-page tokens).
	Resume Resume
}

// Encode returns the token's canonical string: base64url (no padding) of
// the binary layout of docs/format.md followed by the first 8 bytes of the
// SHA-256 of everything before them.
func (t Token) Encode() string {
	var b bytes.Buffer
	b.WriteString(tokenMagic)
	b.WriteByte(TokenVersion)
	b.WriteByte(byte(t.Kind))
	b.Write(t.Graph[:])
	putStr8(&b, t.Branch)
	b.Write(t.Incarnation[:])
	b.Write(t.Filter[:])
	putPoint(&b, t.Last)
	if t.Kind == KindPage || t.Kind == KindCommitPage {
		putPoint(&b, t.At)
		putStr8(&b, t.Resume.Type)
		putStr16(&b, t.Resume.After)
	}
	sum := sha256.Sum256(b.Bytes())
	b.Write(sum[:checksumBytes])
	return base64.RawURLEncoding.EncodeToString(b.Bytes())
}

const (
	tokenMagic    = "gkf"
	checksumBytes = 8
)

// putStr8 writes a string of at most 255 bytes (branch names are at most
// 64, type names are schema names); a longer one is a caller's bug.
func putStr8(b *bytes.Buffer, s string) {
	if len(s) > 255 {
		panic(fmt.Sprintf("feed: token string of %d bytes", len(s)))
	}
	b.WriteByte(byte(len(s)))
	b.WriteString(s)
}

func putStr16(b *bytes.Buffer, s string) {
	if len(s) > maxResumeIDBytes {
		panic(fmt.Sprintf("feed: token resume id of %d bytes", len(s)))
	}
	b.Write(binary.BigEndian.AppendUint16(nil, uint16(len(s))))
	b.WriteString(s)
}

func putPoint(b *bytes.Buffer, p Point) {
	b.Write(p.Commit[:])
	putStr8(b, p.Branch)
	b.Write(binary.BigEndian.AppendUint64(nil, p.Incarnation))
	b.Write(binary.BigEndian.AppendUint64(nil, p.Version))
}

// Decode parses a token string. Every failure is a *CursorError (matching
// ErrBadCursor): too long, not base64url, a wrong magic or unknown
// version, a checksum mismatch, a truncated or over-long body, or fields
// that are not canonical (decoding succeeds only if re-encoding reproduces
// the string).
func Decode(s string) (Token, error) {
	if len(s) == 0 || len(s) > MaxTokenBytes {
		return Token{}, badCursor(Malformed, "length %d not in 1..%d", len(s), MaxTokenBytes)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return Token{}, badCursor(Malformed, "not base64url: %v", err)
	}
	if len(raw) < len(tokenMagic)+2+checksumBytes || string(raw[:len(tokenMagic)]) != tokenMagic {
		return Token{}, badCursor(Malformed, "not a change feed token")
	}
	if v := raw[len(tokenMagic)]; v != TokenVersion {
		return Token{}, badCursor(UnknownVersion, "token version %d, this build reads %d", v, TokenVersion)
	}
	body, sum := raw[:len(raw)-checksumBytes], raw[len(raw)-checksumBytes:]
	if want := sha256.Sum256(body); !bytes.Equal(want[:checksumBytes], sum) {
		return Token{}, badCursor(Checksum, "")
	}
	t, err := parseBody(body[len(tokenMagic)+1:])
	if err != nil {
		return Token{}, err
	}
	if t.Encode() != s {
		return Token{}, badCursor(Malformed, "not canonical")
	}
	return t, nil
}

// parseBody parses the fields after magic and version.
func parseBody(b []byte) (Token, error) {
	r := reader{b: b}
	var t Token
	t.Kind = TokenKind(r.byte())
	r.id(&t.Graph)
	t.Branch = r.str8()
	r.id(&t.Incarnation)
	r.bytes(t.Filter[:])
	t.Last = r.point()
	switch t.Kind {
	case KindCursor:
	case KindPage, KindCommitPage:
		t.At = r.point()
		t.Resume.Type = r.str8()
		t.Resume.After = r.str16()
	default:
		return Token{}, badCursor(Malformed, "unknown token kind %d", t.Kind)
	}
	if r.bad || len(r.b) != 0 {
		return Token{}, badCursor(Malformed, "truncated or trailing bytes")
	}
	if err := t.validate(); err != nil {
		return Token{}, err
	}
	return t, nil
}

// validate checks the fields' shape (the binding's meaning is checked by
// Check against the request).
func (t Token) validate() error {
	for _, s := range []string{t.Branch, t.Last.Branch, t.At.Branch, t.Resume.Type, t.Resume.After} {
		if !utf8.ValidString(s) {
			return badCursor(Malformed, "invalid UTF-8")
		}
	}
	if len(t.Resume.After) > maxResumeIDBytes {
		return badCursor(Malformed, "resume id of %d bytes", len(t.Resume.After))
	}
	if !pointShaped(t.Last) || !pointShaped(t.At) {
		return badCursor(Malformed, "commit position without a commit, or a commit without a branch")
	}
	switch t.Kind {
	case KindCursor, KindPage:
		if t.Branch == "" || t.Incarnation.IsZero() {
			return badCursor(Malformed, "branch token without a branch")
		}
	case KindCommitPage:
		if t.Branch != "" || !t.Incarnation.IsZero() || !t.Last.IsZero() {
			return badCursor(Malformed, "commit-page token bound to a branch")
		}
	}
	if t.Kind != KindCursor && t.At.IsZero() {
		return badCursor(Malformed, "page token without its commit")
	}
	if t.Kind != KindCursor && t.Resume.Type == "" && t.Resume.After != "" {
		return badCursor(Malformed, "resume id without a type")
	}
	return nil
}

// pointShaped: the zero Point, or a commit with its branch.
func pointShaped(p Point) bool {
	if p.Commit.IsZero() {
		return p.IsZero()
	}
	return p.Branch != "" && p.Incarnation > 0
}

type reader struct {
	b   []byte
	bad bool
}

func (r *reader) bytes(dst []byte) {
	if len(r.b) < len(dst) {
		r.bad, r.b = true, nil
		return
	}
	copy(dst, r.b)
	r.b = r.b[len(dst):]
}

func (r *reader) id(dst *ID) { r.bytes(dst[:]) }

func (r *reader) byte() byte {
	var x [1]byte
	r.bytes(x[:])
	return x[0]
}

func (r *reader) u64() uint64 {
	var x [8]byte
	r.bytes(x[:])
	return binary.BigEndian.Uint64(x[:])
}

func (r *reader) strN(n int) string {
	if n > len(r.b) {
		r.bad, r.b = true, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) str8() string { return r.strN(int(r.byte())) }

func (r *reader) str16() string {
	var x [2]byte
	r.bytes(x[:])
	return r.strN(int(binary.BigEndian.Uint16(x[:])))
}

func (r *reader) point() Point {
	var p Point
	r.id(&p.Commit)
	p.Branch = r.str8()
	p.Incarnation = r.u64()
	p.Version = r.u64()
	return p
}

// Check accepts t for a request bound to want, as a token of kind. A token
// of another graph, branch name or filter, or of another kind, is a
// *CursorError; one of the same branch name but another incarnation is
// ErrBranchChanged (the branch was deleted or re-created since).
func (t Token) Check(kind TokenKind, want Binding) error {
	switch {
	case t.Kind != kind && !(kind == KindCursor && t.Kind == KindPage):
		return badCursor(WrongKind, "a kind %d token where kind %d was expected", t.Kind, kind)
	case t.Graph != want.Graph:
		return badCursor(ForeignGraph, "")
	case t.Branch != want.Branch:
		return badCursor(ForeignBranch, "issued for %q, used on %q", t.Branch, want.Branch)
	case t.Filter != want.Filter:
		return badCursor(ForeignFilter, "")
	case t.Incarnation != want.Incarnation:
		return ErrBranchChanged
	}
	return nil
}

// Delivered returns the token a page ends with after delivering the commit
// at, from prev's position: when the whole commit was delivered
// (complete), a cursor whose Last is at; otherwise a page token that keeps
// prev's Last and continues at at from resume. This is the rule that a
// cursor moves only once a whole commit has been delivered.
func Delivered(prev Token, at Point, complete bool, resume Resume) Token {
	next := Token{Binding: prev.Binding, Last: prev.Last}
	if prev.Kind == KindCommitPage {
		next.Kind = KindCommitPage
		next.At, next.Resume = at, resume
		return next
	}
	if complete || plant.Enabled(plant.FeedSkip) {
		next.Kind, next.Last = KindCursor, at
		return next
	}
	next.Kind, next.At, next.Resume = KindPage, at, resume
	return next
}

package schema

import "fmt"

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tNumber
	tStar
	tLBrace
	tRBrace
	tColon
	tQuestion
	tArrow
	tAt
	tLParen
	tRParen
	tDotDot
	tComma
)

var tokNames = [...]string{
	tEOF: "end of input", tIdent: "a name", tNumber: "a number", tStar: "\"*\"",
	tLBrace: "\"{\"", tRBrace: "\"}\"", tColon: "\":\"", tQuestion: "\"?\"",
	tArrow: "\"->\"", tAt: "\"@\"", tLParen: "\"(\"", tRParen: "\")\"",
	tDotDot: "\"..\"", tComma: "\",\"",
}

func (k tokKind) String() string { return tokNames[k] }

type token struct {
	kind tokKind
	text string
	pos  pos
}

func (t token) String() string {
	switch t.kind {
	case tIdent, tNumber:
		return fmt.Sprintf("%q", t.text)
	}
	return t.kind.String()
}

// lexer splits schema text into tokens, tracking 1-based line and column.
type lexer struct {
	src       []byte
	off       int
	line, col int
}

var punct = map[byte]tokKind{
	'*': tStar, '{': tLBrace, '}': tRBrace, ':': tColon, '?': tQuestion,
	'@': tAt, '(': tLParen, ')': tRParen, ',': tComma,
}

func (lx *lexer) next() (token, error) {
	lx.skipSpaceAndComments()
	at := pos{lx.line, lx.col}
	if lx.off >= len(lx.src) {
		return token{kind: tEOF, pos: at}, nil
	}
	c := lx.src[lx.off]
	switch {
	case isLetter(c) || c == '_':
		return token{kind: tIdent, text: lx.take(isIdentByte), pos: at}, nil
	case isDigit(c):
		return token{kind: tNumber, text: lx.take(isDigit), pos: at}, nil
	case c == '-' && lx.peek(1) == '>':
		lx.advance(2)
		return token{kind: tArrow, pos: at}, nil
	case c == '.' && lx.peek(1) == '.':
		lx.advance(2)
		return token{kind: tDotDot, pos: at}, nil
	}
	if k, ok := punct[c]; ok {
		lx.advance(1)
		return token{kind: k, pos: at}, nil
	}
	return token{}, errAt(at, fmt.Sprintf("unexpected character %q", rune(c)))
}

func (lx *lexer) skipSpaceAndComments() {
	for lx.off < len(lx.src) {
		switch c := lx.src[lx.off]; c {
		case ' ', '\t', '\r':
			lx.advance(1)
		case '\n':
			lx.off++
			lx.line++
			lx.col = 1
		case '#':
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.advance(1)
			}
		default:
			return
		}
	}
}

func (lx *lexer) take(ok func(byte) bool) string {
	start := lx.off
	for lx.off < len(lx.src) && ok(lx.src[lx.off]) {
		lx.advance(1)
	}
	return string(lx.src[start:lx.off])
}

func (lx *lexer) peek(n int) byte {
	if lx.off+n < len(lx.src) {
		return lx.src[lx.off+n]
	}
	return 0
}

func (lx *lexer) advance(n int) { lx.off += n; lx.col += n }

func isIdentByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }

// literal reads a default literal raw: a double-quoted string (backslash
// escapes skipped over, no newline) or a run of bytes up to a space, ")"
// or "#"; printable ASCII only, at most MaxDefaultBytes.
func (lx *lexer) literal() (string, error) {
	at := pos{lx.line, lx.col}
	start, i := lx.off, lx.off
	quoted := lx.peek(0) == '"'
	if quoted {
		i++
	}
	for ; i < len(lx.src) && i-start <= MaxDefaultBytes; i++ {
		c := lx.src[i]
		if c < 0x20 || c >= 0x7f {
			return "", errAt(at, fmt.Sprintf("unexpected character %q in a default literal", rune(c)))
		}
		if quoted {
			if c == '\\' {
				i++
				continue
			}
			if c == '"' {
				i++
				break
			}
			continue
		}
		if c == ' ' || c == ')' || c == '#' || c == '\t' {
			break
		}
	}
	if i-start > MaxDefaultBytes || i > len(lx.src) {
		return "", errAt(at, "default literal too long or unterminated")
	}
	if i == start {
		return "", errAt(at, "expected a default literal")
	}
	lx.advance(i - start)
	return string(lx.src[start:i]), nil
}

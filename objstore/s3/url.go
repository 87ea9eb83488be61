package s3

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/graphkernel/graphkernel/objstore"
)

// ErrBadURL is returned (wrapped) by Open and ParseURL for a store URL that
// is not of the form s3://bucket or s3://bucket/prefix.
var ErrBadURL = errors.New("s3: bad store URL")

// ParseURL splits an "s3://bucket/prefix" URL into the bucket name and the
// store prefix. The prefix is empty or ends with '/', and obeys the objstore
// prefix rules; "s3://b/p" and "s3://b/p/" both give prefix "p/". The bucket
// must be a valid S3 bucket name (3-63 characters of lower-case letters,
// digits, '.' and '-', starting and ending with a letter or digit). User
// info, ports, queries and fragments are rejected.
func ParseURL(raw string) (bucket, prefix string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("%w: %q does not parse", ErrBadURL, raw)
	}
	switch {
	case u.Scheme != "s3":
		return "", "", fmt.Errorf("%w: %q: scheme must be s3", ErrBadURL, raw)
	case u.Opaque != "" || u.User != nil || u.Port() != "":
		return "", "", fmt.Errorf("%w: %q: want s3://bucket/prefix", ErrBadURL, raw)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		return "", "", fmt.Errorf("%w: %q: no query or fragment allowed", ErrBadURL, raw)
	}
	if reason := bucketProblem(u.Host); reason != "" {
		return "", "", fmt.Errorf("%w: %q: bucket %s", ErrBadURL, raw, reason)
	}
	prefix, err = normalizePrefix(strings.TrimPrefix(u.Path, "/"))
	if err != nil {
		return "", "", fmt.Errorf("%w: %q: %v", ErrBadURL, raw, err)
	}
	return u.Host, prefix, nil
}

// normalizePrefix makes a store prefix end with '/' (unless empty) and
// checks it against the objstore key rules.
func normalizePrefix(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	// The prefix must itself be a valid key once its final '/' is removed,
	// so "a//b/", "./" and "../" are rejected.
	if err := objstore.ValidateKey(objstore.OpList, strings.TrimSuffix(p, "/")); err != nil {
		return "", fmt.Errorf("prefix: %w", err)
	}
	return p, nil
}

func bucketProblem(b string) string {
	if len(b) < 3 || len(b) > 63 {
		return "name must be 3-63 characters"
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		alnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !alnum && c != '.' && c != '-' {
			return "name may hold only a-z, 0-9, '.' and '-'"
		}
		if (i == 0 || i == len(b)-1) && !alnum {
			return "name must start and end with a letter or digit"
		}
	}
	return ""
}

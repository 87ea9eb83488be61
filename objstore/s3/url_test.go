package s3

import (
	"errors"
	"testing"
)

func TestParseURL(t *testing.T) {
	good := []struct {
		url, bucket, prefix string
	}{
		{"s3://bucket", "bucket", ""},
		{"s3://bucket/", "bucket", ""},
		{"s3://bucket/prefix", "bucket", "prefix/"},
		{"s3://bucket/prefix/", "bucket", "prefix/"},
		{"s3://my.bucket-1/a/b/c", "my.bucket-1", "a/b/c/"},
		{"s3://b00/é/x", "b00", "é/x/"},
	}
	for _, tc := range good {
		bucket, prefix, err := ParseURL(tc.url)
		if err != nil || bucket != tc.bucket || prefix != tc.prefix {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q, nil", tc.url, bucket, prefix, err, tc.bucket, tc.prefix)
		}
	}
	bad := []string{
		"", "bucket", "bucket/prefix", "http://bucket/p", "S3x://bucket", "s3:bucket",
		"s3://", "s3:///prefix", "s3://ab", "s3://Bucket", "s3://bu_cket", "s3://-bucket", "s3://bucket-",
		"s3://" + string(make([]byte, 64)), "s3://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"s3://user:pw@bucket/p", "s3://bucket:9000/p", "s3://bucket/p?x=1", "s3://bucket/p#frag", "s3://bucket/p?",
		"s3://bucket//p", "s3://bucket/a//b", "s3://bucket/./p", "s3://bucket/p/../q", "s3://bucket/p/..",
		"s3://bucket/p%00q", "s3://bucket/p%0Aq", "s3://bucket/%ff",
	}
	for _, raw := range bad {
		bucket, prefix, err := ParseURL(raw)
		if !errors.Is(err, ErrBadURL) {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want ErrBadURL", raw, bucket, prefix, err)
		}
	}
}

func TestNewNormalisesPrefix(t *testing.T) {
	for in, want := range map[string]string{"": "", "p": "p/", "p/": "p/", "a/b": "a/b/"} {
		if got := New(nil, "bucket", in).Prefix(); got != want {
			t.Errorf("New(prefix %q).Prefix() = %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"/p", "a//b", "..", "p//"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(prefix %q) did not panic", bad)
				}
			}()
			New(nil, "bucket", bad)
		}()
	}
}

func TestQuoteETag(t *testing.T) {
	for in, want := range map[string]string{`abc`: `"abc"`, `"abc"`: `"abc"`, `"`: `"""`, ``: `""`, `"a`: `""a"`} {
		if got := quoteETag(in); got != want {
			t.Errorf("quoteETag(%q) = %q, want %q", in, got, want)
		}
	}
}

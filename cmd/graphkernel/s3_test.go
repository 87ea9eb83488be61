package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/objstore/s3/s3test"
)

// s3Env points the standard AWS configuration chain at srv, as a user's
// environment would: endpoint, region and credentials from variables, no
// config or credentials files.
func s3Env(t *testing.T, srv *s3test.Server, secret string) {
	t.Helper()
	for k, v := range map[string]string{ //detlint:ordered (test setup, each variable set once)
		"AWS_ENDPOINT_URL_S3": srv.Endpoint(), "AWS_ENDPOINT_URL": "", "AWS_REGION": s3test.Region,
		"AWS_ACCESS_KEY_ID": s3test.AccessKey, "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	} {
		t.Setenv(k, v)
	}
}

// TestSubcommandsOnS3 runs every subcommand against a local S3 server
// (objstore/s3/s3test) named by the s3://bucket/prefix store syntax and
// opened by the command's own openStore from the AWS environment: load of
// the shipped example, branches, log, show, schema, verify and merge
// --dry-run (both with zero writes), export, diff, changes, maintain and
// recover, branch create and delete, load --upsert (a patch), merge
// --prefer, and a --json failure. No error output ever names the credentials or the endpoint,
// including a failure to authenticate (a wrong secret) and an endpoint
// nothing listens on.
func TestSubcommandsOnS3(t *testing.T) {
	srv := s3test.Start(t)
	s3Env(t, srv, s3test.SecretKey)
	bucket := srv.NewBucket(t)
	spec := "s3://" + bucket + "/gk"
	st, err := openStore(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	f := fixtureOn(t, st, spec)
	f.buildGraph()
	endpoint, err := url.Parse(srv.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{s3test.SecretKey, s3test.AccessKey, endpoint.Host, "wrong-secret-s3test"}
	noSecrets := func(name, out string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s: output names %q:\n%s", name, s, out)
			}
		}
	}
	exportDir := filepath.Join(t.TempDir(), "out")
	patchFile := filepath.Join(t.TempDir(), "patch.jsonl")
	if err := os.WriteFile(patchFile, []byte(`{"_type":"Person","id":"p1","age":77}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		args     []string
		want     int
		contains string
		readOnly bool
	}{
		{"load", []string{"load", spec, "demo", "main", "testdata/people.jsonl", "--schema", "testdata/people.schema"}, 0, "loaded 11 rows", false},
		{"verify-loaded", []string{"verify", spec, "demo"}, 0, "ok: no problems", true},
		{"branches", []string{"branches", spec, testRoot, "--json"}, 0, `"feature"`, true},
		{"log", []string{"log", spec, testRoot, "main", "-n", "10"}, 0, "merge feature", true},
		{"log-json", []string{"log", spec, testRoot, "--json"}, 0, `"manifest_version"`, true},
		{"show", []string{"show", spec, testRoot, "main"}, 0, "Person", true},
		{"schema", []string{"schema", spec, testRoot}, 0, "node Person", true},
		{"verify", []string{"verify", spec, testRoot}, 0, "ok: no problems", true},
		{"export", []string{"export", spec, testRoot, "main", exportDir, "--format", "jsonl"}, 0, "Person", false},
		{"diff", []string{"diff", spec, testRoot, "main@1", "main", "--json"}, 0, "p4", true},
		{"changes", []string{"changes", spec, testRoot, "main@2", "--json"}, 0, "p4", true},
		{"schema-diff", []string{"schema", "diff", spec, testRoot, "main@1", "main"}, 0, "schema unchanged", true},
		{"merge-dry-run", []string{"merge", spec, testRoot, "feature", "main", "--dry-run"}, 0, "", true},
		{"branch-create", []string{"branch", "create", spec, "demo", "s3edit", "--from", "main"}, 0, "created branch s3edit#1", false},
		{"load-upsert-patch", []string{"load", spec, "demo", "s3edit", patchFile, "--upsert"}, 0, "loaded 1 rows", false},
		{"patched-row-kept-name", []string{"diff", spec, "demo", "main", "s3edit"}, 0, "age: 41 -> 77", true},
		{"merge-prefer", []string{"merge", spec, "demo", "s3edit", "main", "--prefer", "source", "--json"}, 0, `"fast-forward"`, false},
		{"branch-delete", []string{"branch", "delete", spec, "demo", "s3edit"}, 0, "deleted branch s3edit", false},
		{"json-failure", []string{"show", spec, testRoot, "nosuchref", "--json"}, 1, `"error"`, true},
		{"maintain", []string{"maintain", spec, testRoot, "--json"}, 0, `"complete"`, false},
		{"recover", []string{"recover", spec, testRoot, "--json"}, 0, "", false},
		{"verify-after", []string{"verify", spec, testRoot, "--json"}, 0, `"problems"`, true},
		{"missing-graph", []string{"branches", spec, "nograph"}, 1, "", true},
		{"missing-bucket", []string{"verify", "s3://no-such-bucket-gk/p", "g"}, 1, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := f.store.Counts()
			code, out, errs := f.run(c.args...)
			if code != c.want || !strings.Contains(out, c.contains) {
				t.Fatalf("graphkernel %s: exit %d (want %d), want output containing %q\nstdout:\n%s\nstderr:\n%s",
					strings.Join(c.args, " "), code, c.want, c.contains, out, errs)
			}
			after := f.store.Counts()
			if w := (after.Put.Requests + after.Delete.Requests) - (before.Put.Requests + before.Delete.Requests); c.readOnly && w != 0 {
				t.Errorf("%s made %d writes, want none", c.name, w)
			}
			noSecrets(c.name, out+errs)
		})
	}
	// A wrong secret: the server refuses the signature; the error says so
	// without the secret, the access key or the endpoint. (A spec other
	// than f.spec goes through openStore and so reads the environment.)
	s3Env(t, srv, "wrong-secret-s3test")
	code, out, errs := f.run("branches", spec+"/", testRoot)
	if code != 1 || errs == "" {
		t.Fatalf("wrong secret: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	noSecrets("wrong secret", out+errs)
	// An endpoint nothing listens on: the dial error is reported without
	// the endpoint's address.
	s3Env(t, srv, s3test.SecretKey)
	t.Setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9")
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	secrets = append(secrets, "127.0.0.1")
	code, out, errs = f.run("branches", spec+"/", testRoot)
	if code != 1 || errs == "" {
		t.Fatalf("unreachable endpoint: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	noSecrets("unreachable endpoint", out+errs)
	t.Logf("unreachable endpoint: %s", strings.TrimSpace(errs))
}

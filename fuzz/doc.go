// Package fuzz holds the fuzz targets of graphkernel's decoders and name
// rules (see decoders_test.go). Every decoder must return a typed error on
// any input and never panic, and valid objects must round-trip byte for
// byte. Seed corpora live in testdata/fuzz/<FuzzName>/ and are regenerated
// from valid encodings with
//
//	go test ./fuzz -run TestSeedCorpus -update-corpus
//
// Run a target with, for example,
//
//	go test ./fuzz -run '^$' -fuzz FuzzDecodeManifest -fuzztime 60s
package fuzz

// Package readme holds no code: its tests keep README.md honest. The
// "Using the library" snippet must be, byte for byte, the body of
// kernel/data's Example_library (which `go test` compiles and runs), and the
// quick-start commands must run as written against a fresh directory.
//
//	go test ./internal/readme -run TestReadmeSnippet -update-readme   # rewrite the snippet from the example
package readme

package main

import (
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
)

// TestExportParquetIsZstd: every column chunk of every Parquet file export
// writes is zstd-compressed (arrow's writer default is uncompressed).
func TestExportParquetIsZstd(t *testing.T) {
	f := newFixture(t, "sim")
	f.mustRun(0, "load", f.spec, "g", "main", "testdata/people.jsonl", "--schema", filepath.Join("testdata", "people.schema"))
	dir := t.TempDir()
	f.mustRun(0, "export", f.spec, "g", "main", dir, "--format", "parquet")
	for _, path := range globFiles(t, dir, "*.parquet") {
		r, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		md := r.MetaData()
		chunks := 0
		for rg := 0; rg < r.NumRowGroups(); rg++ {
			g := md.RowGroup(rg)
			for c := 0; c < g.NumColumns(); c++ {
				cc, err := g.ColumnChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				if cc.Compression() != compress.Codecs.Zstd {
					t.Errorf("%s row group %d column %d: compression %v, want zstd", path, rg, c, cc.Compression())
				}
				chunks++
			}
		}
		r.Close()
		if chunks == 0 {
			t.Fatalf("%s: no column chunks", path)
		}
	}
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/graphkernel/graphkernel/kernel/data"
)

// exportedType is one file export wrote.
type exportedType struct {
	Type string `json:"type"`
	File string `json:"file"`
	Rows uint64 `json:"rows"`
}

// exportReport is `export --json`.
type exportReport struct {
	Commit          string         `json:"commit"`
	Branch          string         `json:"branch"`
	ManifestVersion uint64         `json:"manifest_version"`
	Format          string         `json:"format"`
	Schema          string         `json:"schema_file"`
	Types           []exportedType `json:"types"`
}

var exportExt = map[string]string{"parquet": ".parquet", "arrow": ".arrow", "jsonl": ".jsonl"}

func runExport(ctx context.Context, a *app, o *opts, pos []string) error {
	ext, ok := exportExt[o.format]
	if !ok {
		return &usageError{fmt.Sprintf("--format %q: want parquet, arrow or jsonl", o.format)}
	}
	g, _, err := a.openGraph(ctx, pos[0], pos[1], false)
	if err != nil {
		return err
	}
	s, err := resolveRef(ctx, g, pos[2])
	if err != nil {
		return err
	}
	dir := pos[3]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	contract, err := g.Kernel().Schema(ctx)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	ks := s.Kernel()
	rep := exportReport{Commit: ks.Head().String(), Branch: fmt.Sprintf("%s#%d", ks.Branch(), ks.Incarnation()),
		ManifestVersion: ks.ManifestVersion(), Format: o.format, Schema: filepath.Join(dir, "schema.gk")}
	if err := writeFileAtomic(rep.Schema, func(w io.Writer) error { _, err := w.Write(contract); return err }); err != nil {
		return err
	}
	m := a.newMeter("export", "rows", 0)
	for _, t := range snapshotTypes(s) {
		m.totalItems += int64(t.Rows)
	}
	defer m.done()
	for _, t := range snapshotTypes(s) {
		path := filepath.Join(dir, t.Type+ext)
		n, err := a.exportType(ctx, s, t.Type, o.format, path, m)
		if err != nil {
			return fmt.Errorf("export %s: %w", t.Type, err)
		}
		rep.Types = append(rep.Types, exportedType{Type: t.Type, File: path, Rows: n})
	}
	m.done()
	if o.json {
		return a.emitJSON(rep)
	}
	fmt.Fprintf(a.stdout, "exported %s v%d (commit %s) as %s:\n", rep.Branch, rep.ManifestVersion, rep.Commit, rep.Format)
	for _, t := range rep.Types {
		fmt.Fprintf(a.stdout, "  %-24s %10d rows  %s\n", t.Type, t.Rows, t.File)
	}
	return nil
}

// writeFileAtomic writes path through a temporary file and a rename. The
// writer is buffered unless the format needs to seek (Arrow IPC files).
func writeFileAtomic(path string, write func(w io.Writer) error) error {
	tmp := path + ".tmp"
	fh, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(fh, 1<<20)
	if filepath.Ext(path) == ".arrow" {
		err = write(fh)
	} else {
		err = write(bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// exportType streams one type's rows, fragment by fragment, into path.
func (a *app) exportType(ctx context.Context, s *data.Snapshot, typ, format, path string, m *meter) (uint64, error) {
	tbl, err := s.Table(typ)
	if err != nil {
		return 0, err
	}
	rr, err := s.Scan(ctx, typ)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	var n uint64
	err = writeFileAtomic(path, func(w io.Writer) error {
		rw, err := newRecordWriter(format, tbl.Schema(), w)
		if err != nil {
			return err
		}
		for rr.Next() {
			rec := rr.Record()
			if err := rw.write(rec); err != nil {
				return err
			}
			n += uint64(rec.NumRows())
			m.add(rec.NumRows(), 0)
			m.flush()
		}
		if err := rr.Err(); err != nil && err != io.EOF {
			return err
		}
		return rw.close()
	})
	return n, err
}

// parquetProps are export's Parquet writer properties: zstd on every column
// (arrow's default is uncompressed), dictionary encoding on (the default).
func parquetProps() *parquet.WriterProperties {
	return parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
}

// recordWriter writes Arrow records in one output format.
type recordWriter struct {
	write func(arrow.Record) error
	close func() error
}

func newRecordWriter(format string, sc *arrow.Schema, w io.Writer) (*recordWriter, error) {
	switch format {
	case "arrow":
		ws, ok := w.(io.WriteSeeker)
		if !ok {
			return nil, fmt.Errorf("arrow IPC files need a seekable writer")
		}
		fw, err := ipc.NewFileWriter(ws, ipc.WithSchema(sc))
		if err != nil {
			return nil, err
		}
		return &recordWriter{write: fw.Write, close: fw.Close}, nil
	case "parquet":
		pw, err := pqarrow.NewFileWriter(sc, w, parquetProps(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			return nil, err
		}
		return &recordWriter{write: pw.WriteBuffered, close: pw.Close}, nil
	}
	enc := json.NewEncoder(w)
	return &recordWriter{write: func(rec arrow.Record) error { return writeJSONL(enc, rec) }, close: func() error { return nil }}, nil
}

// writeJSONL writes one JSON object per row (keys sorted: encoding/json
// sorts map keys), nulls explicit.
func writeJSONL(enc *json.Encoder, rec arrow.Record) error {
	for i := 0; i < int(rec.NumRows()); i++ {
		fields, err := arrowRow(rec, i)
		if err != nil {
			return err
		}
		for k, v := range fields { //detlint:ordered values converted in place; json sorts keys
			fields[k] = textOf(v)
		}
		if err := enc.Encode(fields); err != nil {
			return err
		}
	}
	return nil
}

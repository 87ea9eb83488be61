package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// maxLineBytes bounds one JSON Lines line (and one CSV record).
const maxLineBytes = 64 << 20

// sourceFormat picks the reader by file extension.
func sourceFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		return "jsonl", nil
	case ".csv":
		return "csv", nil
	case ".parquet":
		return "parquet", nil
	}
	return "", &usageError{fmt.Sprintf("%s: unknown format (want .jsonl, .ndjson, .csv or .parquet)", path)}
}

// stemType is the type a file's rows have when they carry no _type column:
// the file name up to its first dot (Person.csv, Person.part1.parquet).
func stemType(path string) string {
	base := filepath.Base(path)
	stem, _, _ := strings.Cut(base, ".")
	return stem
}

// sourceOpts tune the readers.
type sourceOpts struct {
	// nullString: a CSV cell equal to it is null (nil: an empty cell is
	// null except for string columns, where it is "").
	nullString *string
}

// readSource streams the records of one file to fn, in file order.
func readSource(ctx context.Context, path string, o sourceOpts, fn func(record) error) error {
	f, err := sourceFormat(path)
	if err != nil {
		return err
	}
	switch f {
	case "jsonl":
		return readJSONL(path, fn)
	case "csv":
		return readCSV(path, o, fn)
	default:
		return readParquet(ctx, path, fn)
	}
}

// withType sets r.typ from the _type field, or the file stem.
func withType(r record, path string) (record, error) {
	r.typ = stemType(path)
	if t, ok := r.fields[colType]; ok && t != nil {
		s, ok := t.(string)
		if !ok || s == "" {
			return r, fmt.Errorf("%s: %s must be a type name", r.loc, colType)
		}
		r.typ = s
	}
	return r, nil
}

func readJSONL(path string, fn func(record) error) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		loc := location{path: path, n: line}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		fields := map[string]any{}
		if err := dec.Decode(&fields); err != nil {
			return fmt.Errorf("%s: not a JSON object: %v", loc, err)
		}
		if dec.More() {
			return fmt.Errorf("%s: more than one JSON value on the line", loc)
		}
		r, err := withType(record{loc: loc, fields: fields, bytes: int64(len(sc.Bytes())) + 1}, path)
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readCSV reads a CSV file with a header row (encoding/csv). An empty cell
// is null, except for string properties and keys; with o.nullString, a
// cell equal to it is null whatever the column.
func readCSV(path string, o sourceOpts, fn func(record) error) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	cr := csv.NewReader(bufio.NewReader(io.LimitReader(fh, 1<<40)))
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s:1: header: %w", path, err)
	}
	header = append([]string(nil), header...)
	offset := cr.InputOffset()
	for {
		cells, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		line, _ := cr.FieldPos(0)
		loc := location{path: path, n: line}
		if err != nil {
			return fmt.Errorf("%s: %w", loc, err)
		}
		fields := make(map[string]any, len(cells))
		for i, c := range cells {
			if o.nullString != nil && c == *o.nullString {
				fields[header[i]] = nil
				continue
			}
			fields[header[i]] = c
		}
		next := cr.InputOffset()
		r, err := withType(record{loc: loc, fields: fields, bytes: next - offset}, path)
		offset = next
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
}

// csvStemTyped reports, for a CSV file whose header has no _type column
// (so every row is of its stem type), that type and the bytes of its rows
// (the file after the header); ok is false for other files, or when the
// header cannot be read (readCSV then reports it).
func csvStemTyped(path string) (typ string, rowBytes int64, ok bool) {
	if f, _ := sourceFormat(path); f != "csv" {
		return "", 0, false
	}
	fh, err := os.Open(path)
	if err != nil {
		return "", 0, false
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return "", 0, false
	}
	cr := csv.NewReader(bufio.NewReader(io.LimitReader(fh, 1<<40)))
	header, err := cr.Read()
	if err != nil || slices.Contains(header, colType) {
		return "", 0, false
	}
	return stemType(path), st.Size() - cr.InputOffset(), true
}

// readParquet streams a Parquet file record batch by record batch
// (pqarrow), numbering rows from 1.
func readParquet(ctx context.Context, path string, fn func(record) error) error {
	pr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 8192}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer rr.Release()
	row := 0
	for rr.Next() {
		rec := rr.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			row++
			loc := location{path: path, n: row, row: true}
			fields, err := arrowRow(rec, i)
			if err != nil {
				return fmt.Errorf("%s: %w", loc, err)
			}
			r, err := withType(record{loc: loc, fields: fields}, path)
			if err != nil {
				return err
			}
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: row %d: %w", path, row+1, err)
	}
	return nil
}

// arrowRow reads row i of rec as Go values.
func arrowRow(rec arrow.Record, i int) (map[string]any, error) {
	fields := make(map[string]any, rec.NumCols())
	for c, f := range rec.Schema().Fields() {
		v, err := arrowValue(rec.Column(c), i)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		fields[f.Name] = v
	}
	return fields, nil
}

func arrowValue(col arrow.Array, i int) (any, error) {
	if col.IsNull(i) {
		return nil, nil
	}
	switch a := col.(type) {
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.Binary:
		return append([]byte{}, a.Value(i)...), nil
	case *array.LargeBinary:
		return append([]byte{}, a.Value(i)...), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Int32:
		return int64(a.Value(i)), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.Float32:
		return float64(a.Value(i)), nil
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC(), nil
	}
	return nil, fmt.Errorf("unsupported Arrow type %s", col.DataType())
}

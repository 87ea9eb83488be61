package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/graphkernel/graphkernel/kernel/data"
)

// The columnar CSV path (issue #28.2): a CSV file whose rows all have its
// stem type and whose header names only that type's columns (of kinds
// parsed here) is read into Arrow records of up to csvChunkRows rows,
// built directly from the cells (no per-row map, no data.Row), and staged
// with Txn.WriteRecord. A goroutine of the command reads and builds the
// next chunks while the loader stages and commits: the chunks, their order
// and so every transaction are the same as reading in line, so the load
// stays deterministic. Anything the fast path does not take (a cell that
// does not parse, a record the transaction rejects, one row over the byte
// budget) is staged again row by row through the row path, which reports
// the row's location and the same error a load without this path gives.

// csvChunkRows is the most rows one chunk (one staged record) holds: a
// fragment's worth, so a load of input sorted by id writes its staged
// records as fragments without copying them.
const csvChunkRows = data.MaxFragmentRows

// columnarCSV turns the columnar path on (tests compare it with the row
// path); columnarTaken, when set (tests only), is told each file it takes.
var (
	columnarCSV   = true
	columnarTaken func(path string)
)

// csvAhead is how many chunks the reader may build ahead of the loader.
const csvAhead = 2

// csvRow is one row of a chunk: where it is, its input bytes and cells.
type csvRow struct {
	loc   location
	bytes int64
	cells []string
}

// csvChunk is consecutive rows of one file with the record built from
// them (nil when a cell does not parse), and the read error that ended
// the file after them, if any.
type csvChunk struct {
	rows []csvRow
	rec  arrow.Record
	err  error
}

// csvColumn is how one field of the table's Arrow schema is filled: from
// header column cell (-1: absent, every value null).
type csvColumn struct {
	cell int
}

// csvPlan is a file the columnar path takes: its type, header and the
// table's Arrow schema with the header column of each field.
type csvPlan struct {
	path   string
	typ    string
	ti     typeInfo
	header []string
	schema *arrow.Schema
	cols   []csvColumn
}

// columnarPlan returns the plan for file path when columnar is set and the
// columnar path can take it: CSV without a _type column, its stem type known and of this
// pass, insert or whole-row upsert (a patch needs the base rows), and a
// header naming id (and from, to of an edge) and only properties of a kind
// parsed here, each once. Otherwise ok is false and the row path reads it.
func (l *loader) columnarPlan(ctx context.Context, path string, edges, columnar bool) (*csvPlan, bool) {
	if !columnar || !columnarCSV || (l.upsert && !l.replace) {
		return nil, false
	}
	typ, _, ok := csvStemTyped(path)
	if !ok {
		return nil, false
	}
	ti, known := l.types[typ]
	if !known || ti.edge != edges {
		return nil, false
	}
	header, ok := csvHeader(path)
	if !ok {
		return nil, false
	}
	snap, err := l.g.SnapshotAt(ctx, l.b)
	if err != nil {
		return nil, false // the row path meets the same error where it matters
	}
	tbl, err := snap.Table(typ)
	if err != nil {
		return nil, false
	}
	p := &csvPlan{path: path, typ: typ, ti: ti, header: header, schema: tbl.Schema()}
	at := map[string]int{}
	for i, h := range header {
		if _, dup := at[h]; dup {
			return nil, false
		}
		at[h] = i
	}
	for _, f := range p.schema.Fields() {
		i, ok := at[f.Name]
		if !ok {
			i = -1
		}
		if ok && !parsedType(f.Type) {
			return nil, false
		}
		p.cols = append(p.cols, csvColumn{cell: i})
		delete(at, f.Name)
	}
	if len(at) > 0 || p.cols[0].cell < 0 || (ti.edge && (p.cols[1].cell < 0 || p.cols[2].cell < 0)) {
		return nil, false // an unknown column or a missing key: the row path names it
	}
	if columnarTaken != nil {
		columnarTaken(path)
	}
	return p, true
}

// parsedType reports whether the columnar path parses cells of type t.
func parsedType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.INT64, arrow.INT32, arrow.FLOAT64, arrow.BOOL:
		return true
	}
	return false
}

// csvHeader reads the header of a CSV file as readCSV does.
func csvHeader(path string) ([]string, bool) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer fh.Close()
	header, err := csv.NewReader(bufio.NewReader(io.LimitReader(fh, 1<<40))).Read()
	return header, err == nil
}

// build returns the record of rows, or nil when a cell does not parse as
// its column's kind (the row path then reports it). Cells follow readCSV:
// a cell equal to the null string is null; else an empty cell is null in
// every column but a string one.
func (p *csvPlan) build(rows []csvRow, nullString *string) arrow.Record {
	b := array.NewRecordBuilder(memory.DefaultAllocator, p.schema)
	defer b.Release()
	b.Reserve(len(rows))
	for f, c := range p.cols {
		if !fillColumn(b.Field(f), c.cell, rows, nullString) {
			return nil
		}
	}
	return b.NewRecord()
}

// fillColumn appends cell i of every row to fb (every value null when i
// is -1); false when a cell does not parse.
func fillColumn(fb array.Builder, i int, rows []csvRow, nullString *string) bool {
	if i < 0 {
		fb.AppendNulls(len(rows))
		return true
	}
	for _, r := range rows {
		s := r.cells[i]
		if nullString != nil && s == *nullString {
			fb.AppendNull()
			continue
		}
		if sb, ok := fb.(*array.StringBuilder); ok {
			sb.Append(s)
			continue
		}
		if s == "" {
			fb.AppendNull()
			continue
		}
		if !appendParsed(fb, s) {
			return false
		}
	}
	return true
}

// appendParsed parses s as parseKind does for fb's kind and appends it.
func appendParsed(fb array.Builder, s string) bool {
	switch b := fb.(type) {
	case *array.Int64Builder:
		n, err := strconv.ParseInt(s, 10, 64)
		b.Append(n)
		return err == nil
	case *array.Int32Builder:
		n, err := strconv.ParseInt(s, 10, 32)
		b.Append(int32(n))
		return err == nil
	case *array.Float64Builder:
		x, err := strconv.ParseFloat(s, 64)
		b.Append(x)
		return err == nil
	case *array.BooleanBuilder:
		v, err := strconv.ParseBool(s)
		b.Append(v)
		return err == nil
	}
	return false
}

// readChunks reads the plan's file and sends its rows in chunks of at
// most size rows, each with its record, until the end of the file, a read
// error (sent with the rows before it) or ctx's end; it closes out.
func (p *csvPlan) readChunks(ctx context.Context, size int, nullString *string, out chan<- csvChunk) {
	defer close(out)
	send := func(ch csvChunk) bool {
		if len(ch.rows) > 0 {
			ch.rec = p.build(ch.rows, nullString)
		}
		select {
		case out <- ch:
			return true
		case <-ctx.Done():
			if ch.rec != nil {
				ch.rec.Release()
			}
			return false
		}
	}
	fh, err := os.Open(p.path)
	if err != nil {
		send(csvChunk{err: err})
		return
	}
	defer fh.Close()
	cr := csv.NewReader(bufio.NewReaderSize(io.LimitReader(fh, 1<<40), 1<<16))
	if _, err := cr.Read(); err != nil {
		send(csvChunk{err: fmt.Errorf("%s:1: header: %w", p.path, err)})
		return
	}
	offset := cr.InputOffset()
	rows := make([]csvRow, 0, size)
	for {
		cells, err := cr.Read()
		if errors.Is(err, io.EOF) {
			send(csvChunk{rows: rows})
			return
		}
		line, _ := cr.FieldPos(0)
		loc := location{path: p.path, n: line}
		if err != nil {
			send(csvChunk{rows: rows, err: fmt.Errorf("%s: %w", loc, err)})
			return
		}
		next := cr.InputOffset()
		rows = append(rows, csvRow{loc: loc, bytes: next - offset, cells: cells})
		offset = next
		if len(rows) == size {
			if !send(csvChunk{rows: rows}) {
				return
			}
			rows = make([]csvRow, 0, size)
		}
	}
}

// loadColumnar stages the rows of the plan's file: a goroutine reads and
// builds chunks ahead while this one stages them in file order.
func (l *loader) loadColumnar(ctx context.Context, p *csvPlan) error {
	rctx, cancel := context.WithCancel(ctx)
	out := make(chan csvChunk, csvAhead)
	go p.readChunks(rctx, min(csvChunkRows, l.batch), l.src.nullString, out)
	defer func() {
		cancel()
		for ch := range out { // the reader stops at its next send
			if ch.rec != nil {
				ch.rec.Release()
			}
		}
	}()
	for ch := range out {
		var n int64
		for _, r := range ch.rows {
			n += r.bytes
		}
		l.meter.add(0, n)
		err := l.stageChunk(ctx, p, ch)
		if err == nil {
			err = ch.err
		}
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// stageChunk stages a chunk's rows as records, committing first when the
// transaction has no room for them (--batch-rows) or the byte budget
// refuses them; what the records do not take goes through the row path.
// It releases the chunk's record.
func (l *loader) stageChunk(ctx context.Context, p *csvPlan, ch csvChunk) error {
	rows := ch.rows
	if len(rows) == 0 {
		return nil
	}
	if ch.rec == nil {
		return l.stageRows(ctx, p, rows) // a cell does not parse
	}
	defer ch.rec.Release()
	limit := len(rows)
	for len(rows) > 0 {
		if l.staged >= l.batch {
			if err := l.flush(ctx); err != nil {
				return err
			}
		}
		n := min(len(rows), l.batch-l.staged, limit)
		part := ch.rec
		if n < len(ch.rows) {
			if part = p.build(rows[:n], l.src.nullString); part == nil {
				panic("graphkernel: a part of a chunk that parsed does not parse")
			}
		}
		err := l.writeRecord(ctx, p.typ, part)
		if part != ch.rec {
			part.Release()
		}
		switch {
		case err == nil:
			l.noteStaged(rows[:n])
			rows = rows[n:]
		case errors.Is(err, data.ErrTooLarge) && l.staged > 0:
			if err := l.flush(ctx); err != nil {
				return err
			}
		case errors.Is(err, data.ErrTooLarge) && n > 1:
			limit = n / 2
		default:
			return l.stageRows(ctx, p, rows) // the row path reports the row
		}
	}
	return nil
}

// writeRecord stages rec in the current transaction (begun if none).
func (l *loader) writeRecord(ctx context.Context, typ string, rec arrow.Record) error {
	if err := l.begin(ctx); err != nil {
		return err
	}
	op := data.OpInsert
	if l.upsert {
		op = data.OpUpsert // with replace: whole rows (columnarPlan takes no patches)
	}
	return l.tx.WriteRecord(op, typ, rec)
}

// noteStaged counts rows the transaction took, as stage does per row.
func (l *loader) noteStaged(rows []csvRow) {
	if l.staged == 0 {
		l.first, l.start = rows[0].loc, l.seen
	}
	l.staged += len(rows)
	l.seen += len(rows)
	l.last = rows[len(rows)-1].loc
	l.meter.add(int64(len(rows)), 0)
}

// stageRows stages rows one by one through the row path (readCSV's fields,
// toRow, Insert), which names the first row it rejects.
func (l *loader) stageRows(ctx context.Context, p *csvPlan, rows []csvRow) error {
	for _, r := range rows {
		fields := make(map[string]any, len(p.header))
		for i, c := range r.cells {
			if l.src.nullString != nil && c == *l.src.nullString {
				fields[p.header[i]] = nil
				continue
			}
			fields[p.header[i]] = c
		}
		if err := l.stage(ctx, p.ti, record{loc: r.loc, bytes: r.bytes, typ: p.typ, fields: fields}); err != nil {
			return err
		}
	}
	return nil
}

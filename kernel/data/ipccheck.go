package data

import (
	"encoding/binary"
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"
)

// Arrow's IPC reader sizes some Go allocations by vector lengths read from
// the file footer (schema fields, field children, key-value metadata),
// outside the allocator decodeIPC caps; a forged length there is a fatal,
// unrecoverable out-of-memory (a 377 GB make), not a panic. checkIPCFooter
// bounds every such length before arrow sees the bytes. The field ids are
// Arrow's File.fbs and Schema.fbs: Footer{version, schema, dictionaries,
// recordBatches, custom_metadata}, Schema{endianness, fields,
// custom_metadata, features}, Field{name, nullable, type_type, type,
// dictionary, children, custom_metadata}.
const (
	ipcMagic = "ARROW1"

	footerSchema, footerDictionaries, footerBatches, footerMetadata = 6, 8, 10, 12
	schemaFields, schemaMetadata, schemaFeatures                    = 6, 8, 10
	fieldDictionary, fieldChildren, fieldMetadata                   = 12, 14, 16

	ipcBlockBytes = 24 // struct Block{offset int64, metaDataLength int32, bodyLength int64}
	// maxIPCFields bounds a fragment schema's columns (id, from, to and the
	// properties of one type).
	maxIPCFields = 4096
)

// checkIPCFooter reports an error unless b's footer has no dictionaries,
// exactly one record batch whose block lies inside b, at most maxIPCFields
// flat fields (no children, no dictionary encoding, as every fragment and
// page this package writes), and key-value metadata vectors that fit in
// the footer. It may panic on bytes that are not a flatbuffer at all: call
// it under decodeIPC's recover.
func checkIPCFooter(b []byte) error {
	const tail = len(ipcMagic) + 4
	if len(b) < 2*len(ipcMagic)+4+2 || string(b[len(b)-len(ipcMagic):]) != ipcMagic {
		return fmt.Errorf("not an Arrow IPC file")
	}
	size := int(binary.LittleEndian.Uint32(b[len(b)-tail:]))
	if size < 4 || size > len(b)-tail-len(ipcMagic) {
		return fmt.Errorf("footer of %d bytes in a %d-byte file", size, len(b))
	}
	buf := b[len(b)-tail-size : len(b)-tail]
	footer := &flatbuffers.Table{Bytes: buf, Pos: flatbuffers.GetUOffsetT(buf)}
	if n, err := vectorLen(footer, footerDictionaries, ipcBlockBytes); err != nil || n != 0 {
		return fmt.Errorf("footer dictionaries: %d %v", n, err)
	}
	if n, err := vectorLen(footer, footerBatches, ipcBlockBytes); err != nil || n != 1 {
		return fmt.Errorf("footer record batches: %d %v", n, err)
	}
	if err := checkBatchBlock(footer, len(b)); err != nil {
		return err
	}
	if _, err := vectorLen(footer, footerMetadata, 4); err != nil {
		return fmt.Errorf("footer metadata: %v", err)
	}
	o := footer.Offset(footerSchema)
	if o == 0 {
		return fmt.Errorf("footer has no schema")
	}
	schema := &flatbuffers.Table{Bytes: buf, Pos: footer.Indirect(footer.Pos + flatbuffers.UOffsetT(o))}
	return checkIPCSchema(schema)
}

// checkBatchBlock checks that the one record batch block lies inside a
// file of n bytes.
func checkBatchBlock(footer *flatbuffers.Table, n int) error {
	start := footer.Vector(flatbuffers.UOffsetT(footer.Offset(footerBatches)))
	blk := footer.Bytes[start : start+ipcBlockBytes]
	off := int64(binary.LittleEndian.Uint64(blk[0:]))
	meta := int64(int32(binary.LittleEndian.Uint32(blk[8:])))
	body := int64(binary.LittleEndian.Uint64(blk[16:]))
	if off < 0 || meta < 0 || body < 0 || off > int64(n) || meta > int64(n)-off || body > int64(n)-off-meta {
		return fmt.Errorf("record batch block [%d+%d+%d] outside the %d-byte file", off, meta, body, n)
	}
	return nil
}

// checkIPCSchema bounds the schema's fields and metadata.
func checkIPCSchema(schema *flatbuffers.Table) error {
	n, err := vectorLen(schema, schemaFields, 4)
	if err != nil || n > maxIPCFields {
		return fmt.Errorf("schema fields: %d %v", n, err)
	}
	if _, err := vectorLen(schema, schemaMetadata, 4); err != nil {
		return fmt.Errorf("schema metadata: %v", err)
	}
	if _, err := vectorLen(schema, schemaFeatures, 8); err != nil {
		return fmt.Errorf("schema features: %v", err)
	}
	start := schema.Vector(flatbuffers.UOffsetT(schema.Offset(schemaFields)))
	for i := 0; i < n; i++ {
		at := start + flatbuffers.UOffsetT(4*i)
		field := &flatbuffers.Table{Bytes: schema.Bytes, Pos: schema.Indirect(at)}
		if field.Offset(fieldDictionary) != 0 {
			return fmt.Errorf("field %d is dictionary-encoded", i)
		}
		if c, err := vectorLen(field, fieldChildren, 4); err != nil || c != 0 {
			return fmt.Errorf("field %d children: %d %v", i, c, err)
		}
		if _, err := vectorLen(field, fieldMetadata, 4); err != nil {
			return fmt.Errorf("field %d metadata: %v", i, err)
		}
	}
	return nil
}

// vectorLen is the length of t's vector field at vtable offset slot (0 if
// absent), checked to fit in t's bytes at elem bytes an element.
func vectorLen(t *flatbuffers.Table, slot flatbuffers.VOffsetT, elem int) (int, error) {
	o := t.Offset(slot)
	if o == 0 {
		return 0, nil
	}
	n := t.VectorLen(flatbuffers.UOffsetT(o))
	start := int(t.Vector(flatbuffers.UOffsetT(o)))
	if n < 0 || start > len(t.Bytes) || n > (len(t.Bytes)-start)/elem {
		return 0, fmt.Errorf("vector of %d elements past the end of the footer", n)
	}
	return n, nil
}

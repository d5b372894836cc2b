package gen

import "encoding/binary"

// The end-to-end stamp (src/run/stamp.rs): 21 bytes little-endian under the header "kb":
// intended send time (ns since the run's origin), producer id, the producer's sequence
// number, and flags (bit 0 measured, bit 1 in a transaction to be aborted, bit 2 backlog).
const (
	StampHeader = "kb"
	StampLen    = 21

	StampMeasured = 1
	StampAborted  = 2
	StampBacklog  = 4
)

// PutStamp writes a stamp into out.
func PutStamp(out []byte, intendedNs uint64, producer uint32, seq uint64, flags byte) {
	_ = out[StampLen-1]
	binary.LittleEndian.PutUint64(out[0:8], intendedNs)
	binary.LittleEndian.PutUint32(out[8:12], producer)
	binary.LittleEndian.PutUint64(out[12:20], seq)
	out[20] = flags
}

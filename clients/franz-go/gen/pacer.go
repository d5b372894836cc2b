package gen

import "math"

// The send schedule, as src/run/pacer.rs: record i is due when the integral of the rate
// reaches i; sender k of P takes the records i ≡ k (mod P).

// roundingSlack: integral values this close below a whole number count as reaching it.
const roundingSlack = 1e-9

// Segment is one stretch of a rate shape: its rate for its duration, ramping to RampTo when
// set (model::RateSegment).
type Segment struct {
	DurationNs uint64
	PerSec     float64
	RampTo     *float64
}

// Rate is model::RateSpec: unlimited (no Fixed, no Shape), a fixed rate, or a shape.
type Rate struct {
	Fixed float64 // records/s, when > 0
	Shape []Segment
}

// Unlimited says records are due as soon as they can be sent.
func (r Rate) Unlimited() bool { return r.Fixed <= 0 && r.Shape == nil }

type segment struct {
	first, end, startNs, nsPerRecord float64
	ramp                             bool
	rate, halfSlope                  float64
}

// Pacer walks one share of a schedule: O(1) per record, the segment only moves forward.
type Pacer struct {
	unlimited   bool
	nsPerRecord float64
	shaped      bool
	segments    []segment
	total       uint64
	originNs    uint64
	next, of    uint64
	seg         int
}

// Slot kinds.
const (
	SlotAt = iota
	SlotNow
	SlotDone
)

// NewPacer starts the schedule at originNs on the sender's clock; this sender takes the
// records index, index+of, ….
func NewPacer(rate Rate, index, of, originNs uint64) *Pacer {
	p := &Pacer{originNs: originNs, next: index, of: of}
	switch {
	case rate.Shape != nil:
		p.shaped = true
		integral, startNs := 0.0, 0.0
		for _, s := range rate.Shape {
			// Rust's Duration::as_secs_f64.
			secs := float64(s.DurationNs/1e9) + float64(s.DurationNs%1e9)/1e9
			to := s.PerSec
			if s.RampTo != nil {
				to = *s.RampTo
			}
			records := float64((s.PerSec+to)/2.0) * secs
			if records > 0 {
				sg := segment{first: integral, end: integral + records, startNs: startNs,
					nsPerRecord: 1e9 / s.PerSec}
				if to != s.PerSec {
					sg.ramp, sg.rate, sg.halfSlope = true, s.PerSec, (to-s.PerSec)/float64(2.0*secs)
				}
				p.segments = append(p.segments, sg)
			}
			integral += records
			startNs += float64(secs * 1e9)
		}
		p.total = uint64(math.Floor(integral + roundingSlack))
	case rate.Fixed > 0:
		p.nsPerRecord = 1e9 / rate.Fixed
	default:
		p.unlimited = true
	}
	return p
}

// Total is how many records a shape has (0 and false for an unbounded rate).
func (p *Pacer) Total() (uint64, bool) { return p.total, p.shaped }

// NextSlot is the next record of this share: SlotAt with its due time on the sender's clock,
// SlotNow (unlimited), or SlotDone (the shape is over).
func (p *Pacer) NextSlot() (int, uint64) {
	i := p.next
	var offset uint64
	switch {
	case p.unlimited:
		return SlotNow, 0
	case !p.shaped:
		offset = uint64(float64(float64(i) * p.nsPerRecord))
	default:
		if i >= p.total {
			return SlotDone, 0
		}
		for {
			if p.seg >= len(p.segments) {
				return SlotDone, 0
			}
			s := &p.segments[p.seg]
			if float64(i) < s.end-roundingSlack {
				offset = timeIn(s, i)
				break
			}
			p.seg++
		}
	}
	p.next += p.of
	return SlotAt, p.originNs + offset
}

func timeIn(s *segment, i uint64) uint64 {
	k := max(float64(i)-s.first, 0.0)
	if !s.ramp {
		return uint64(s.startNs + float64(k*s.nsPerRecord))
	}
	secs := 0.0
	if k != 0 {
		disc := max(float64(s.rate*s.rate)+float64(float64(4.0*s.halfSlope)*k), 0.0)
		secs = float64(2.0*k) / (s.rate + math.Sqrt(disc))
	}
	return uint64(s.startNs + float64(secs*1e9))
}

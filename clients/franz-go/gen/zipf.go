package gen

import "math"

// Zipf over 1..=n by rejection-inversion (Hörmann and Derflinger), as src/run/payload.rs.
// Its draws go through log and exp: Go's and the C library's may differ in the last bit, so
// the shared vectors say whether a port's keys match (see zipf_test.go).
type Zipf struct {
	n, s, hX1, hN, c float64
}

func NewZipf(n uint64, s float64) *Zipf {
	z := &Zipf{n: float64(n), s: s}
	z.hX1 = z.bigH(1.5) - 1.0
	z.hN = z.bigH(float64(n) + 0.5)
	z.c = 2.0 - z.bigHInv(z.bigH(2.5)-z.h(2.0))
	return z
}

func (z *Zipf) h(x float64) float64 { return math.Exp(float64(-z.s * math.Log(x))) }

func (z *Zipf) bigH(x float64) float64 {
	lx := math.Log(x)
	return float64(expm1OverX(float64((1.0-z.s)*lx)) * lx)
}

func (z *Zipf) bigHInv(x float64) float64 {
	t := max(float64(x*(1.0-z.s)), -1.0)
	return math.Exp(float64(log1pOverX(t) * x))
}

func (z *Zipf) Sample(r *Rng) uint64 {
	for {
		u := z.hN + float64(r.Float()*(z.hX1-z.hN))
		x := z.bigHInv(u)
		k := min(max(math.Round(x), 1.0), z.n)
		if k-x <= z.c || u >= z.bigH(k+0.5)-z.h(k) {
			return uint64(k)
		}
	}
}

func log1pOverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1.0 - float64(x*(0.5-float64(x*(1.0/3.0-float64(0.25*x)))))
}

func expm1OverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1.0 + float64(float64(float64(x*0.5)*(1.0+float64(float64(x*(1.0/3.0))*(1.0+float64(0.25*x))))))
}

package sprt

import "math"

// The numerical kernels below are written here rather than taken from gonum:
// Fishtest's results depend on SciPy's exact root-finding steps and stopping
// rules (brentq with xtol=2e-12, rtol=4·eps, maxiter=100), which gonum does
// not reproduce, and the normal CDF/quantile need only a few lines on top of
// math.Erfc. Keeping them here also keeps go.mod untouched.

// SciPy's brentq defaults; a root found with other tolerances differs from
// Fishtest's in the digits the reference vectors check.
const (
	brentXTol    = 2e-12
	brentRTol    = 4 * 2.220446049250313e-16
	brentMaxIter = 100
)

// rootError reports why a root could not be bracketed or found; the
// no-sign-change case mirrors SciPy's ValueError "f(a) and f(b) must have
// different signs".
type rootError string

func (e rootError) Error() string { return string(e) }

const (
	errNoSignChange  = rootError("root bracket does not change sign")
	errNotConverged  = rootError("root finder did not converge")
	errNotFiniteRoot = rootError("root finder met a non-finite function value")
)

// brentq follows SciPy's brentq step for step (the same choice between
// inverse interpolation, extrapolation and bisection, and the same stopping
// test), so that roots agree with Fishtest's to the last few ulps.
// converged is false when maxiter was exhausted (SciPy then still returns the
// last iterate); err is set when the bracket has no sign change or the
// function returns NaN, where SciPy's answer would be meaningless anyway.
func brentq(f func(float64) float64, xa, xb float64) (root float64, converged bool, err error) {
	xpre, xcur := xa, xb
	var xblk, fblk, spre, scur float64
	fpre := f(xpre)
	fcur := f(xcur)
	if math.IsNaN(fpre) || math.IsNaN(fcur) {
		return 0, false, errNotFiniteRoot
	}
	if fpre == 0 {
		return xpre, true, nil
	}
	if fcur == 0 {
		return xcur, true, nil
	}
	if math.Signbit(fpre) == math.Signbit(fcur) {
		return 0, false, errNoSignChange
	}
	for i := 0; i < brentMaxIter; i++ {
		if fpre != 0 && fcur != 0 && math.Signbit(fpre) != math.Signbit(fcur) {
			xblk = xpre
			fblk = fpre
			spre = xcur - xpre
			scur = spre
		}
		if math.Abs(fblk) < math.Abs(fcur) {
			xpre = xcur
			xcur = xblk
			xblk = xpre

			fpre = fcur
			fcur = fblk
			fblk = fpre
		}

		delta := (brentXTol + brentRTol*math.Abs(xcur)) / 2
		sbis := (xblk - xcur) / 2
		if fcur == 0 || math.Abs(sbis) < delta {
			return xcur, true, nil
		}

		if math.Abs(spre) > delta && math.Abs(fcur) < math.Abs(fpre) {
			var stry float64
			if xpre == xblk {
				// interpolate
				stry = -fcur * (xcur - xpre) / (fcur - fpre)
			} else {
				// extrapolate
				dpre := (fpre - fcur) / (xpre - xcur)
				dblk := (fblk - fcur) / (xblk - xcur)
				stry = -fcur * (fblk*dblk - fpre*dpre) / (dblk * dpre * (fblk - fpre))
			}
			if 2*math.Abs(stry) < math.Min(math.Abs(spre), 3*math.Abs(sbis)-delta) {
				// good short step
				spre = scur
				scur = stry
			} else {
				spre = sbis
				scur = sbis
			}
		} else {
			spre = sbis
			scur = sbis
		}

		xpre = xcur
		fpre = fcur
		if math.Abs(scur) > delta {
			xcur += scur
		} else if sbis > 0 {
			xcur += delta
		} else {
			xcur -= delta
		}
		fcur = f(xcur)
		if math.IsNaN(fcur) {
			return xcur, false, errNotFiniteRoot
		}
	}
	return xcur, false, nil
}

// normalCDF is the standard normal distribution function. Erfc keeps full
// relative precision in the lower tail, where Fishtest's Siegmund
// approximation evaluates it.
func normalCDF(x float64) float64 {
	return 0.5 * math.Erfc(-x/math.Sqrt2)
}

// NormalQuantile is the inverse of the standard normal CDF (SciPy's
// norm.ppf): Acklam's rational approximation (relative error 1.15e-9)
// refined by one Halley step on the exact CDF, which brings it to within a
// few ulps.
func NormalQuantile(p float64) float64 {
	switch {
	case math.IsNaN(p) || p < 0 || p > 1:
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	}
	const pLow = 0.02425
	a := [6]float64{-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
		1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00}
	b := [5]float64{-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
		6.680131188771972e+01, -1.328068155288572e+01}
	c := [6]float64{-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
		-2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00}
	d := [4]float64{7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
		3.754408661907416e+00}
	var x float64
	switch {
	case p < pLow:
		q := math.Sqrt(-2 * math.Log(p))
		x = (((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) /
			((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	case p <= 1-pLow:
		q := p - 0.5
		r := q * q
		x = (((((a[0]*r+a[1])*r+a[2])*r+a[3])*r+a[4])*r + a[5]) * q /
			(((((b[0]*r+b[1])*r+b[2])*r+b[3])*r+b[4])*r + 1)
	default:
		q := math.Sqrt(-2 * math.Log(1-p))
		x = -(((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) /
			((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	}
	// Halley refinement; in the upper tail work with the complement so that
	// 1-p does not lose the digits that matter.
	var e float64
	if p > 0.5 {
		e = (1 - p) - 0.5*math.Erfc(x/math.Sqrt2)
	} else {
		e = 0.5*math.Erfc(-x/math.Sqrt2) - p
	}
	u := e * math.Sqrt(2*math.Pi) * math.Exp(x*x/2)
	return x - u/(1+x*u/2)
}

// Neumaier's compensated summation, the per-thread accumulation of f64 sums: (s, c) += x,
// and the compensated total. Infinities bypass the compensation (s - s is NaN for them).
PC_FN void pc_kahan(double &s, double &c, double x) {
  const double t = s + x;
  if (fabs(s) >= fabs(x)) c += (s - t) + x; else c += (x - t) + s;
  s = t;
}
PC_FN double pc_kahan_done(double s, double c) { return (s - s == 0.0) ? s + c : s; }

// numpy's add.at along an axis on a copy of the input (already in dst): one thread per
// (outer, inner) column adds that column's values in index order, so repeated indices
// accumulate without atomics and in the CPU's order. ROUND rounds each sum to a half
// (the buffers then hold halves widened to f32), or is empty.
// One launch adds the indices jbeg..jend (at most LOOP_BUDGET of them: llvmpipe ends longer
// loops early) into what the launches before it left in dst, so the order is the same.
// prm: 0 columns, 1 inner, 2 m (values along the axis), 3 n (the output's axis length),
// 4 jbeg, 5 jend.
    let cols = prm(0u);
    if (cols == 0u || g > (cols - 1u) / 256u) { return; }
    let c = g * 256u + lid;
    if (c >= cols) { return; }
    let inner = prm(1u);
    let m = prm(2u);
    let n = prm(3u);
    let i = c % inner;
    let o = c / inner;
    for (var j = prm(4u); j < prm(5u); j = j + 1u) {
        let at = (o * n + norm_index(idx[j], n)) * inner + i;
        dst[at] = {ROUND}(dst[at] + vals[(o * m + j) * inner + i]);
    }

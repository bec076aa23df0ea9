// An index along an axis of n elements, negative ones (i32) counted from the end as numpy
// does; in range (the array layer checked it), so the u32 arithmetic wraps into place.
fn norm_index(v: {I}, n: u32) -> u32 {
    return bitcast<u32>(v) + select(0u, n, v < {I}(0));
}

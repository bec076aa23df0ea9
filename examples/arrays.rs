//! The README's tour of the array vocabulary (numpy's names and rules, on any device).

use polycompute::{keepdims, s, where_, Device};

fn main() -> polycompute::Result<()> {
    let dev = Device::default()?;
    let x = dev.arange(0.0f32, 6.0, 1.0)?.reshape(&[2, 3])?; // also linspace, eye, ones, *_like
    let y = ((&x * 2.0)? + 1.0 - &x.mean(keepdims(-1))?)?; // operators broadcast
    let z = y.exp()?.clip(0.0, 100.0)?.maximum(&x)?; // exp, log, sqrt, pow, clip, maximum, ...
    let v = x.var([0, 1], 1)?; // one axis, several or None; var/std with ddof
    let positive = where_(&x.map(|e| e.gt(2.0))?, &x, 0.0)?; // numpy's where
    let tail = x.slice(s![.., 1..])?; // views: slice, transpose, broadcast_to, ...
    println!("{z}\n{v:?}\n{positive}\n{tail}"); // printed as numpy prints them
    Ok(())
}

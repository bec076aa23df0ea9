//! Printing arrays as numpy does: `{}` is numpy's `str(a)` (`[[1. 2.]\n [3. 4.]]`), `{:?}`
//! its `repr` with the dtype, shape and device (`DeviceArray([1., 2.], dtype=f32,
//! shape=[2], device=cpu:0)`).
//!
//! numpy's default print options are followed: floats print the fewest digits (at most 8
//! after the point) that read back as the same value, padded to line up; scientific
//! notation when the largest magnitude is at least 1e8, the smallest non-zero one below
//! 1e-4, or their ratio above 1000; lines wrap at 75 characters; an array of more than
//! 1000 elements shows the first and last 3 items along each axis around `...`. Printing
//! reads the array back from its device, and of a large array only those edge items.

use std::fmt;

use ndarray::SliceInfoElem;

use crate::array::DeviceArray;
use crate::dtype::{bf16, f16, DType, Element, Scalar};
use crate::error::Result;

/// Arrays with more elements are summarized (numpy's `threshold`).
const THRESHOLD: usize = 1000;
/// Items kept at each end of a summarized axis (numpy's `edgeitems`).
const EDGE_ITEMS: usize = 3;
/// numpy's `linewidth`.
const LINE_WIDTH: usize = 75;
/// The most digits after the point (numpy's `precision`).
const PRECISION: usize = 8;

impl<T: Element> fmt::Display for DeviceArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.printed(" ", "", LINE_WIDTH) {
            Ok(text) => f.write_str(&text),
            Err(e) => {
                write!(f, "<{} array {} on {}: not readable: {e}>", T::DTYPE, self.layout.shape, self.device.id())
            }
        }
    }
}

impl<T: Element> fmt::Debug for DeviceArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const PREFIX: &str = "DeviceArray(";
        let suffix = format!("dtype={}, shape={}, device={})", T::DTYPE, self.layout.shape, self.device.id());
        // The values leave room for the comma after them, as numpy's repr does.
        match self.printed(", ", PREFIX, LINE_WIDTH - 1) {
            Ok(values) => {
                // numpy's rule: the suffix moves to a new line when it would pass the width.
                let text = format!("{PREFIX}{values},");
                let last_line = text.len() - text.rfind('\n').map_or(0, |i| i + 1);
                let spacer = if last_line + 1 + suffix.len() > LINE_WIDTH {
                    format!("\n{}", " ".repeat(PREFIX.len()))
                } else {
                    " ".to_string()
                };
                write!(f, "{text}{spacer}{suffix}")
            }
            Err(e) => write!(f, "{PREFIX}<not readable: {e}>, {suffix}"),
        }
    }
}

impl<T: Element> DeviceArray<T> {
    /// The values as numpy prints them, with `separator` between items, in lines of at
    /// most `width` characters continued under `prefix`'s width.
    fn printed(&self, separator: &str, prefix: &str, width: usize) -> Result<String> {
        let dims = self.shape().to_vec();
        if self.is_empty() {
            return Ok("[]".into());
        }
        let summarize = self.len() > THRESHOLD;
        let (values, kept) = self.edge_values(summarize)?;
        let words: Vec<String> = match T::DTYPE.is_float() {
            true => FloatFormat::new(&values).words(&values),
            false => {
                let text: Vec<String> = values.iter().map(|v| integer_text(v.to_scalar())).collect();
                let width = text.iter().map(String::len).max().unwrap_or(0);
                text.into_iter().map(|t| format!("{t:>width$}")).collect()
            }
        };
        if dims.is_empty() {
            return Ok(words.into_iter().next().unwrap_or_default());
        }
        let layout = Nested { dims: &dims, kept: &kept, words: &words, separator, summarize };
        let indent = " ".repeat(prefix.len() + 1);
        Ok(layout.array(0, 0, &indent, width))
    }

    /// The elements printing needs, row-major, and the length kept along each axis: all
    /// of them, or (summarizing) the first and last [`EDGE_ITEMS`] of each long axis,
    /// gathered on the device so that only they are read back.
    fn edge_values(&self, summarize: bool) -> Result<(Vec<T>, Vec<usize>)> {
        let mut edges = self.clone();
        if summarize {
            for axis in 0..self.ndim() {
                let n = edges.shape()[axis];
                if n <= 2 * EDGE_ITEMS {
                    continue;
                }
                let part = |start: isize, end: Option<isize>| {
                    let mut info = vec![SliceInfoElem::Slice { start: 0, end: None, step: 1 }; self.ndim()];
                    info[axis] = SliceInfoElem::Slice { start, end, step: 1 };
                    edges.slice(info)
                };
                let (head, tail) = (part(0, Some(EDGE_ITEMS as isize))?, part(-(EDGE_ITEMS as isize), None)?);
                edges = DeviceArray::concat(&[&head, &tail], axis)?;
            }
        }
        Ok((edges.to_vec()?, edges.shape().to_vec()))
    }
}

/// An integer element's text (floats go through [`FloatFormat`]).
fn integer_text(s: Scalar) -> String {
    match s {
        Scalar::I32(v) => v.to_string(),
        Scalar::U32(v) => v.to_string(),
        Scalar::I64(v) => v.to_string(),
        Scalar::U8(v) => v.to_string(),
        Scalar::Bool(v) => v.to_string(),
        Scalar::F32(v) => v.to_string(),
        Scalar::F64(v) => v.to_string(),
        Scalar::F16(v) => v.to_string(),
        Scalar::BF16(v) => v.to_string(),
    }
}

/// True when the decimal `text` reads back as `v` in its own dtype.
fn reads_back(text: &str, v: f64, dtype: DType) -> bool {
    let Ok(p) = text.parse::<f64>() else { return false };
    match dtype {
        DType::F32 => p as f32 == v as f32,
        DType::F16 => f16::from_f64(p) == f16::from_f64(v),
        DType::BF16 => bf16::from_f64(p) == bf16::from_f64(v),
        DType::F64 | DType::I32 | DType::U32 | DType::I64 | DType::U8 | DType::Bool => p == v,
    }
}

/// `v` with `p` digits after the point, positional or scientific (Rust's `1.5e-5`).
fn with_digits(v: f64, p: usize, scientific: bool) -> String {
    if scientific {
        format!("{v:.p$e}")
    } else {
        format!("{v:.p$}")
    }
}

/// The fewest digits after the point whose text reads back as `v`; when even
/// `PRECISION` digits do not, the `PRECISION`-digit text without its trailing zeros.
fn unique_digits(v: f64, dtype: DType, scientific: bool) -> usize {
    if let Some(p) = (0..PRECISION).find(|&p| reads_back(&with_digits(v, p, scientific), v, dtype)) {
        return p;
    }
    let text = with_digits(v, PRECISION, scientific);
    let mantissa = text.split('e').next().unwrap_or(&text);
    let fraction = mantissa.split_once('.').map_or("", |(_, f)| f);
    fraction.trim_end_matches('0').len()
}

/// numpy's `FloatingFormat` in its default `maxprec` mode.
struct FloatFormat {
    dtype: DType,
    scientific: bool,
    /// Digits after the point in scientific notation (one for all elements).
    precision: usize,
    /// Digits of the exponent (at least 2).
    exp_digits: usize,
    pad_left: usize,
    pad_right: usize,
}

impl FloatFormat {
    fn new<T: Element>(values: &[T]) -> FloatFormat {
        let dtype = T::DTYPE;
        let all: Vec<f64> = values.iter().map(|v| v.to_scalar().to_f64()).collect();
        let finite: Vec<f64> = all.iter().copied().filter(|v| v.is_finite()).collect();
        let magnitudes = finite.iter().map(|v| v.abs()).filter(|&a| a != 0.0);
        let (lo, hi) = magnitudes.fold((f64::INFINITY, 0.0f64), |(lo, hi), a| (lo.min(a), hi.max(a)));
        let scientific = hi > 0.0 && (hi >= 1e8 || lo < 1e-4 || hi / lo > 1e3);
        let mut format = FloatFormat { dtype, scientific, precision: 0, exp_digits: 2, pad_left: 0, pad_right: 0 };
        if !finite.is_empty() {
            if scientific {
                format.precision = finite.iter().map(|&v| unique_digits(v, dtype, true)).max().unwrap_or(0);
                for &v in &finite {
                    let text = with_digits(v, format.precision, true);
                    let exp = text.split('e').nth(1).unwrap_or("0").trim_start_matches('-');
                    format.exp_digits = format.exp_digits.max(exp.len());
                    format.pad_left = format.pad_left.max(1 + usize::from(v.is_sign_negative()));
                }
                format.pad_right = format.exp_digits + 2 + format.precision;
            } else {
                for &v in &finite {
                    let text = format.positional(v);
                    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
                    format.pad_left = format.pad_left.max(int.len());
                    format.pad_right = format.pad_right.max(frac.len());
                }
            }
        }
        if finite.len() != all.len() {
            let neg_inf = all.contains(&f64::NEG_INFINITY);
            let offset = format.pad_right + 1;
            format.pad_left = format
                .pad_left
                .max(3usize.saturating_sub(offset))
                .max((3 + usize::from(neg_inf)).saturating_sub(offset));
        }
        format
    }

    /// `v` with its unique digits, trailing zeros and all, but always with the point.
    fn positional(&self, v: f64) -> String {
        let p = unique_digits(v, self.dtype, false);
        let text = format!("{v:.p$}");
        if p == 0 {
            text + "."
        } else {
            text
        }
    }

    fn word(&self, v: f64) -> String {
        let width = self.pad_left + self.pad_right + 1;
        if !v.is_finite() {
            let text = if v.is_nan() {
                "nan"
            } else if v > 0.0 {
                "inf"
            } else {
                "-inf"
            };
            return format!("{text:>width$}");
        }
        if self.scientific {
            let text = format!("{v:.prec$e}", prec = self.precision);
            let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
            let (sign, digits) = exp.strip_prefix('-').map_or(('+', exp), |d| ('-', d));
            let mantissa = if self.precision == 0 { format!("{mantissa}.") } else { mantissa.to_string() };
            let (int, frac) = mantissa.split_once('.').unwrap_or((&mantissa, ""));
            format!("{int:>left$}.{frac}e{sign}{digits:0>exp$}", left = self.pad_left, exp = self.exp_digits)
        } else {
            let text = self.positional(v);
            let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
            format!("{int:>left$}.{frac:<right$}", left = self.pad_left, right = self.pad_right)
        }
    }

    fn words<T: Element>(&self, values: &[T]) -> Vec<String> {
        values.iter().map(|v| self.word(v.to_scalar().to_f64())).collect()
    }
}

/// numpy's `_formatArray`: nested brackets, rows wrapped at the line width, `...` where a
/// summarized axis skips items, blank lines between blocks of three or more dimensions.
struct Nested<'a> {
    dims: &'a [usize],
    kept: &'a [usize],
    words: &'a [String],
    separator: &'a str,
    summarize: bool,
}

impl Nested<'_> {
    /// The sub-array of axis `axis` starting at flat element `start` of the kept values.
    fn array(&self, axis: usize, start: usize, indent: &str, width: usize) -> String {
        let kept = self.kept[axis];
        let stride: usize = self.kept[axis + 1..].iter().product();
        let summary = self.summarize && self.dims[axis] > 2 * EDGE_ITEMS;
        let next_indent = format!("{indent} ");
        let item = |i: usize| start + i * stride;
        let mut out = String::new();
        if axis + 1 == self.dims.len() {
            let element_width = width - self.separator.trim_end().len().max(1);
            let mut line = indent.to_string();
            for i in 0..kept {
                if summary && i == EDGE_ITEMS {
                    extend_line(&mut out, &mut line, "...", element_width, indent);
                    line.push_str(self.separator);
                }
                extend_line(&mut out, &mut line, &self.words[item(i)], element_width, indent);
                if i + 1 < kept {
                    line.push_str(self.separator);
                }
            }
            out.push_str(&line);
        } else {
            let line_sep = format!("{}{}", self.separator.trim_end(), "\n".repeat(self.dims.len() - axis - 1));
            for i in 0..kept {
                if summary && i == EDGE_ITEMS {
                    out.push_str(indent);
                    out.push_str("...");
                    out.push_str(&line_sep);
                }
                out.push_str(indent);
                out.push_str(&self.array(axis + 1, item(i), &next_indent, width - 1));
                if i + 1 < kept {
                    out.push_str(&line_sep);
                }
            }
        }
        format!("[{}]", &out[indent.len()..])
    }
}

/// numpy's `_extendLine`: `word` goes on `line`, or on a new line when it would pass
/// `width` (unless the line holds nothing but the indent).
fn extend_line(out: &mut String, line: &mut String, word: &str, width: usize, indent: &str) {
    if line.len() + word.len() > width && line.len() > indent.len() {
        out.push_str(line.trim_end());
        out.push('\n');
        *line = indent.to_string();
    }
    line.push_str(word);
}

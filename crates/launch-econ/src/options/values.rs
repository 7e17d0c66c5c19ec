//! Parsers and limits for option values: every one validates, so bad input is a usage error.

/// The most launches one round may ask for: past this a run takes minutes and the graph
/// gigabytes of host memory, which no question about launch overhead needs.
pub const MAX_LAUNCHES: u64 = 1_000_000;
/// The most elements of the `add` kernel (4 GiB of floats per buffer).
pub const MAX_ELEMS: u64 = 1 << 30;
/// The most points one sweep list or range may expand to.
pub const MAX_LIST: usize = 256;

/// Activation size in bytes: 4..=1 GiB, a multiple of 4 (it is an f32 vector).
pub fn parse_activation(s: &str) -> Result<u64, String> {
    let b = parse_count(s, "bytes", 1 << 30)?;
    if b % 4 != 0 {
        return Err(format!(
            "{b} bytes is not a multiple of 4 (the activation is f32)"
        ));
    }
    Ok(b)
}

/// A relative noise in percent: finite, above 0, at most 100.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a percentage"))?;
    if !v.is_finite() || v <= 0.0 || v > 100.0 {
        return Err(format!("`{s}` must be above 0 and at most 100 (percent)"));
    }
    Ok(v)
}

/// A time in seconds: finite, 0..=86400.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !v.is_finite() || !(0.0..=86400.0).contains(&v) {
        return Err(format!("`{s}` must be between 0 and 86400 seconds"));
    }
    Ok(v)
}

/// `FROM..TO` in µs, FROM < TO, both finite and not negative.
pub fn parse_window(s: &str) -> Result<(f64, f64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("`{s}` is not a window FROM..TO (µs)"))?;
    let p = |v: &str| -> Result<f64, String> {
        let x: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("`{v}` is not a number of µs"))?;
        if !x.is_finite() || x < 0.0 {
            return Err(format!("`{v}` must be a finite, non-negative number of µs"));
        }
        Ok(x)
    };
    let (a, b) = (p(a)?, p(b)?);
    if a >= b {
        return Err(format!("window `{s}` is empty: FROM must be below TO"));
    }
    Ok((a, b))
}

/// A duration in ns: finite, 0..=1e6.
pub fn parse_ns(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of ns"))?;
    if !v.is_finite() || !(0.0..=1e6).contains(&v) {
        return Err(format!("`{s}` must be between 0 and 1000000 ns"));
    }
    Ok(v)
}

/// A host overhead in µs: finite, 0..=1e6.
pub fn parse_us(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of µs"))?;
    if !v.is_finite() || !(0.0..=1e6).contains(&v) {
        return Err(format!("`{s}` must be between 0 and 1000000 µs"));
    }
    Ok(v)
}

/// A duration in µs from which something applies: finite 0..=1e6, or `off` / `inf` (never,
/// returned as infinity).
pub fn parse_from_us(s: &str) -> Result<f64, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("off") || t.eq_ignore_ascii_case("inf") {
        return Ok(f64::INFINITY);
    }
    parse_us(t).map_err(|e| format!("{e} (or `off`)"))
}

/// A parsed `--devices` list.
pub type DeviceList = Vec<usize>;

/// A parsed list of counts.
pub type LaunchList = Vec<u64>;

/// A launch count: a whole number in 1..=MAX_LAUNCHES.
pub fn parse_launches(s: &str) -> Result<u64, String> {
    parse_count(s, "launches", MAX_LAUNCHES)
}

/// A kernel size: a whole number of elements in 1..=MAX_ELEMS.
pub fn parse_elems(s: &str) -> Result<u64, String> {
    parse_count(s, "elements", MAX_ELEMS)
}

pub(crate) fn parse_count(s: &str, what: &str, max: u64) -> Result<u64, String> {
    let n: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number of {what}"))?;
    if n == 0 {
        return Err(format!("the number of {what} must be at least 1"));
    }
    if n > max {
        return Err(format!("{n} {what} is more than the maximum of {max}"));
    }
    Ok(n)
}

/// A time in ms: finite and above zero.
pub fn parse_positive_ms(s: &str) -> Result<f64, String> {
    let v = parse_ms(s)?;
    if v <= 0.0 {
        return Err(format!("`{s}` must be above 0 ms"));
    }
    Ok(v)
}

/// A time in ms: finite and not negative.
pub fn parse_ms(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of milliseconds"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!(
            "`{s}` must be a finite, non-negative number of milliseconds"
        ));
    }
    Ok(v)
}

pub(crate) fn parse_launch_list(s: &str) -> Result<LaunchList, String> {
    parse_list(s, "launches", MAX_LAUNCHES)
}

pub(crate) fn parse_elem_list(s: &str) -> Result<LaunchList, String> {
    parse_list(s, "elements", MAX_ELEMS)
}

/// `a,b,c` | `A..B` (doubling) | `A..B:xK` | `A..B:+K`; each item may itself be a range.
pub fn parse_list(s: &str, what: &str, max: u64) -> Result<LaunchList, String> {
    let mut out = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("`{s}`: empty item in the list"));
        }
        match item.split_once("..") {
            None => out.push(parse_count(item, what, max)?),
            Some((lo, rest)) => {
                let (hi, step) = match rest.split_once(':') {
                    Some((hi, step)) => (hi, Some(step)),
                    None => (rest, None),
                };
                let lo = parse_count(lo, what, max)?;
                let hi = parse_count(hi, what, max)?;
                if lo > hi {
                    return Err(format!("range `{item}` runs backwards ({lo} > {hi})"));
                }
                let next: Box<dyn Fn(u64) -> u64> = match step {
                    None => Box::new(|v: u64| v.saturating_mul(2)),
                    Some(st) => {
                        let mut chars = st.chars();
                        let kind = chars.next().map(String::from).unwrap_or_default();
                        let k: u64 = chars.as_str().parse().map_err(|_| {
                            format!(
                                "range step `{st}` must be x<factor> or +<step>, e.g. x4 or +100"
                            )
                        })?;
                        match kind.as_str() {
                            "x" if k >= 2 => Box::new(move |v: u64| v.saturating_mul(k)),
                            "+" if k >= 1 => Box::new(move |v: u64| v.saturating_add(k)),
                            _ => {
                                return Err(format!(
                                    "range step `{st}` must be x<factor ≥ 2> or +<step ≥ 1>"
                                ))
                            }
                        }
                    }
                };
                let mut v = lo;
                while v <= hi {
                    out.push(v);
                    if out.len() > MAX_LIST || v == u64::MAX {
                        break;
                    }
                    v = next(v);
                }
            }
        }
        if out.len() > MAX_LIST {
            return Err(format!("`{s}` expands to more than {MAX_LIST} values"));
        }
    }
    Ok(out)
}

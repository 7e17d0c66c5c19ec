//! The seed's two lines, exactly as the question was first asked, so results stay comparable
//! with earlier runs. Line one reports wall time per eager launch and per replayed node; line
//! two the round model's saving (see `model`).

use crate::model::Round;

/// Wall µs per launch, eager and as graph replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeedResult {
    pub launches: u64,
    pub eager_us: f64,
    pub graph_us: f64,
}

impl SeedResult {
    /// `launches=N eager=X.XXX us/launch graph-replay=Y.YYY us/launch ratio=Z.ZZx`
    pub fn line(&self) -> String {
        format!(
            "launches={} eager={:.3} us/launch graph-replay={:.3} us/launch ratio={:.2}x",
            self.launches,
            self.eager_us,
            self.graph_us,
            self.eager_us / self.graph_us.max(1e-9)
        )
    }
}

/// The round the original question asked about: 1346 launches, 7.9 ms of host issue.
pub const STEP37: Round = Round {
    launches: 1346,
    host_issue_ms: 7.9,
    gpu_ms: None,
};

/// The second line, for the user's round and the model's saving in ms. The default round keeps
/// the seed's "step37 verify round" label; a round the user describes is "your round". A round
/// the graph does not shorten says "no saving" rather than a negative (or `-0.00`) number, and
/// a round without GPU time says its saving is an upper bound (taken as host-bound, the GPU
/// is assumed to keep up with whatever the graph launches).
pub fn saving_line(round: &Round, saving_ms: f64) -> String {
    let saving = if saving_ms > 0.0 {
        format!("{} ms", crate::output::num(saving_ms, 2))
    } else {
        "no saving".into()
    };
    let name = if *round == STEP37 {
        "a step37 verify round"
    } else {
        "your round"
    };
    let gpu = match round.gpu_ms {
        Some(g) => format!(", {} ms GPU", crate::output::num_plain(g)),
        None => String::new(),
    };
    let bound = if round.gpu_ms.is_none() && saving_ms > 0.0 {
        " (an upper bound: no GPU time given, so the round is taken as host-bound)"
    } else {
        ""
    };
    format!(
        "predicted saving on {name} ({} launches, {} ms measured host issue{gpu}): {saving}{bound}",
        round.launches,
        crate::output::num_plain(round.host_issue_ms),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_have_the_seed_format() {
        let r = SeedResult {
            launches: 1346,
            eager_us: 4.1234,
            graph_us: 0.98765,
        };
        assert_eq!(
            r.line(),
            "launches=1346 eager=4.123 us/launch graph-replay=0.988 us/launch ratio=4.17x"
        );
        assert_eq!(
            saving_line(&STEP37, 4.2204),
            "predicted saving on a step37 verify round (1346 launches, 7.9 ms measured host issue): 4.22 ms (an upper bound: no GPU time given, so the round is taken as host-bound)"
        );
        assert!(saving_line(&STEP37, -0.004).ends_with("issue): no saving"));
        let yours = Round {
            launches: 240,
            host_issue_ms: 4.3,
            gpu_ms: Some(0.72),
        };
        assert_eq!(
            saving_line(&yours, 3.5),
            "predicted saving on your round (240 launches, 4.3 ms measured host issue, 0.72 ms GPU): 3.50 ms"
        );
    }
}

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

/// The second line, for the user's round and the model's saving in ms; a round the graph
/// does not shorten says "no saving" rather than a negative (or `-0.00`) number.
pub fn saving_line(round: &Round, saving_ms: f64) -> String {
    let saving = if saving_ms > 0.0 {
        format!("{} ms", crate::output::num(saving_ms, 2))
    } else {
        "no saving".into()
    };
    format!(
        "predicted saving on a step37 verify round ({} launches, {} ms measured host issue): {saving}",
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
        let round = Round {
            launches: 1346,
            host_issue_ms: 7.9,
            gpu_ms: None,
        };
        assert_eq!(
            saving_line(&round, 4.2204),
            "predicted saving on a step37 verify round (1346 launches, 7.9 ms measured host issue): 4.22 ms"
        );
        assert!(saving_line(&round, -0.004).ends_with("issue): no saving"));
    }
}

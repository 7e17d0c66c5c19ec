//! The front-end gap a replay plans every graph node with: what a real kernel's graph node
//! costs beyond the duration a profiler recorded for it eagerly, µs.
//!
//! The engine can estimate it on the GPU at hand ([`front_end_gap_us`]: a
//! one-block spin's graph node less the profiled duration its calibration predicts), but on the
//! H200 that estimate moves with the machine instance while real graphs do not: 0.065–0.098
//! µs on the instances the replay was validated on, 0.10–0.21 on others, where the replayed
//! graphs came out high by the difference a node; a profiler on both kinds of instance found
//! the engine's own spin node moving against the same kernel's node in a CuPy graph, and
//! CUPTI's eager durations moving as well (`docs/host-gap-h200.json`). So where a profile
//! of the same kind of GPU holds the gap, it is taken from there, and the estimate is kept for
//! GPUs no profile describes.

use std::fmt;

use memra_engine::{Engine, LaunchShape};
use serde::{Deserialize, Serialize};

use crate::calibration::Calibration;
use crate::document::{same_gpu, ModelProfile};
use crate::stand_in::node_us;
use crate::stats::median;

/// Where the gap comes from, as asked on the command line (`--node-gap`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum NodeGapChoice {
    /// The device profile's (`--profile`, else the shipped one) where it describes this kind of
    /// GPU, else measured.
    #[default]
    Profile,
    /// Measured on this GPU at the start of the replay.
    Measure,
    /// This many µs.
    Us(f64),
}

impl NodeGapChoice {
    /// `profile`, `measure` or a number of µs (finite, -1 to 10: a node may cost less than
    /// its kernel's profiled duration, see [`gap_beyond_profiled_us`]).
    pub fn parse(s: &str) -> Result<NodeGapChoice, String> {
        match s.trim() {
            "profile" => Ok(NodeGapChoice::Profile),
            "measure" => Ok(NodeGapChoice::Measure),
            v => match v.parse::<f64>() {
                Ok(us) if us.is_finite() && (-1.0..=10.0).contains(&us) => {
                    Ok(NodeGapChoice::Us(us))
                }
                _ => Err(format!(
                    "`{s}` is not `profile`, `measure` or a gap in us between -1 and 10"
                )),
            },
        }
    }

    /// The gap to plan with on a GPU named `device`, given the profile the user passed
    /// (`--profile`: the profile and where it came from, as
    /// [`crate::pricing::load_profile`] gives them), if any; `None` means measure it.
    pub fn resolve(
        &self,
        device: &str,
        user_profile: Option<&(ModelProfile, String)>,
    ) -> Option<NodeGap> {
        match *self {
            NodeGapChoice::Us(us) => Some(NodeGap {
                us,
                source: GapSource::User,
            }),
            NodeGapChoice::Measure => None,
            NodeGapChoice::Profile => {
                let (p, origin) = profile_for(device, user_profile)?;
                Some(NodeGap {
                    us: p.model_inputs.graph_node_gap_us?,
                    source: GapSource::Profile {
                        origin,
                        device: p.device?.name,
                    },
                })
            }
        }
    }
}

/// The device profile describing a GPU named `device`, and where it came from: the user's
/// (`--profile`, as [`crate::pricing::load_profile`] gives it) where given, else the shipped
/// one; `None` where that profile was measured on another kind of GPU (its inputs would
/// misprice this one).
pub fn profile_for(
    device: &str,
    user_profile: Option<&(ModelProfile, String)>,
) -> Option<(ModelProfile, String)> {
    let (p, origin) = match user_profile {
        Some((p, origin)) => (p.clone(), origin.clone()),
        None => (
            ModelProfile::shipped_for(device)?,
            "the shipped profile".to_string(),
        ),
    };
    same_gpu(device, &p.device.as_ref()?.name).then_some((p, origin))
}

/// The gap the profile shipped for a GPU named `device` holds, and the GPU it was measured on;
/// `None` on a GPU no shipped profile describes.
pub fn shipped_gap_us(device: &str) -> Option<(f64, String)> {
    let p = ModelProfile::shipped_for(device)?;
    Some((p.model_inputs.graph_node_gap_us?, p.device?.name))
}

/// Where the gap a replay planned with came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum GapSource {
    /// A device profile of the same kind of GPU (`origin`: the file, or the shipped one).
    Profile { origin: String, device: String },
    /// Estimated on this GPU by the engine (also what results written before the source was
    /// recorded did).
    #[default]
    Measured,
    /// Given on the command line.
    User,
}

impl fmt::Display for GapSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GapSource::Profile { origin, device } => write!(f, "from {origin} ({device})"),
            GapSource::Measured => write!(f, "estimated on this GPU by the engine"),
            GapSource::User => write!(f, "--node-gap"),
        }
    }
}

/// A gap and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeGap {
    pub us: f64,
    pub source: GapSource,
}

impl NodeGap {
    /// `given`, else the gap estimated on `e` ([`front_end_gap_us`]).
    pub fn given_or_measured(
        given: Option<&NodeGap>,
        e: &Engine,
        cal: &Calibration,
    ) -> anyhow::Result<NodeGap> {
        Ok(match given {
            Some(g) => g.clone(),
            None => NodeGap {
                us: front_end_gap_us(e, cal)?,
                source: GapSource::Measured,
            },
        })
    }
}

/// The GPU time a graph node adds to its kernel's profiled duration, µs: a one-block spin
/// asked for nothing, as a graph node (the median of 5 measurements: one is a difference of
/// two short replays, and a single one moved by 0.1 µs between runs on the H200), less its
/// profiled duration (span + ramp, from `cal`).
pub fn front_end_gap_us(e: &Engine, cal: &Calibration) -> anyhow::Result<f64> {
    Ok(gap_beyond_profiled_us(spin_node_us(e)?, cal))
}

/// A one-block spin asked for nothing, as a graph node, µs (the median of 5).
pub fn spin_node_us(e: &Engine) -> anyhow::Result<f64> {
    let mut slots = e.zeros::<u64>(Engine::SPIN_SLOT_WORDS)?;
    let one = LaunchShape::linear(1, 128);
    let nodes = (0..5)
        .map(|_| node_us(e, |eng| eng.spin_grid(0, one, &mut slots, 0)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(median(&nodes))
}

/// A gap of `us` as added to a duration in a report: `+ 0.072 us`, or `- 0.061 us` for a
/// negative one (see [`gap_beyond_profiled_us`]).
pub fn added(us: f64) -> String {
    if us < 0.0 {
        format!("- {:.3} us", -us)
    } else {
        format!("+ {us:.3} us")
    }
}

/// What a report says beside a negative gap.
pub const SHORTER: &str = "a node shorter than its kernel's profiled time";

/// What a one-block spin's node of `one_node_us` adds to its profiled duration (span +
/// ramp, from `cal`), µs; negative where the node costs less than the profiler shows the
/// kernel: a profiler's ramp (the time it sees before a kernel's first instruction) is partly
/// hidden behind the node before it in a graph. On an H100 (ramp 930-990 ns) real graphs at
/// the lower level ran 0.01-0.06 µs a node under their kernels' profiled durations, where the
/// H200's ran 0.07 over (`docs/validation-h200.md`, "A node shorter than its profiled
/// kernel"); a gap held at 0 priced the H100's one-stream walks 5-15% high. No less than the
/// ramp taken back: a node is never shorter than its kernel's own span.
pub fn gap_beyond_profiled_us(one_node_us: f64, cal: &Calibration) -> f64 {
    let one_profiled_us =
        (cal.ramp_ns + cal.span_overhead_fixed_ns + cal.span_overhead_per_block_ns) / 1e3;
    (one_node_us - one_profiled_us).max(-cal.ramp_ns.max(0.0) / 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{DEFAULT_PROFILE, DEFAULT_PROFILE_NAME};

    #[test]
    fn parses_the_three_forms_and_refuses_the_rest() {
        assert_eq!(
            NodeGapChoice::parse("profile").unwrap(),
            NodeGapChoice::Profile
        );
        assert_eq!(
            NodeGapChoice::parse("measure").unwrap(),
            NodeGapChoice::Measure
        );
        assert_eq!(
            NodeGapChoice::parse("0.05").unwrap(),
            NodeGapChoice::Us(0.05)
        );
        // A node may cost less than its kernel's profiled duration.
        assert_eq!(
            NodeGapChoice::parse("-0.06").unwrap(),
            NodeGapChoice::Us(-0.06)
        );
        for bad in ["-1.5", "nan", "inf", "11", "fast", ""] {
            assert!(NodeGapChoice::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_gap_is_signed_and_no_less_than_the_ramp_taken_back() {
        let cal = Calibration {
            span_overhead_fixed_ns: 76.0,
            span_overhead_per_block_ns: 0.0,
            ramp_ns: 992.0,
            timer_tick_ns: 32.0,
        };
        // A one-block spin profiled at 1.068 µs.
        assert!((gap_beyond_profiled_us(1.140, &cal) - 0.072).abs() < 1e-9);
        assert!((gap_beyond_profiled_us(1.008, &cal) + 0.060).abs() < 1e-9);
        assert!((gap_beyond_profiled_us(0.0, &cal) + 0.992).abs() < 1e-9);
        assert_eq!(added(0.072), "+ 0.072 us");
        assert_eq!(added(-0.06), "- 0.060 us");
    }

    #[test]
    fn the_shipped_profile_gives_the_gap_on_its_gpu_only() {
        let shipped = ModelProfile::parse(DEFAULT_PROFILE, DEFAULT_PROFILE_NAME).unwrap();
        let want = shipped.model_inputs.graph_node_gap_us.unwrap();
        let g = NodeGapChoice::Profile.resolve("NVIDIA H200", None).unwrap();
        assert_eq!(g.us, want);
        assert!(matches!(g.source, GapSource::Profile { .. }));
        assert!(g.source.to_string().contains("NVIDIA H200"), "{}", g.source);
        // No profile describes another GPU's front end: the replay measures it.
        assert_eq!(
            NodeGapChoice::Profile.resolve("NVIDIA A100-SXM4-80GB", None),
            None
        );
        assert_eq!(NodeGapChoice::Measure.resolve("NVIDIA H200", None), None);
        let user = NodeGapChoice::Us(0.2).resolve("NVIDIA H200", None).unwrap();
        assert_eq!((user.us, user.source), (0.2, GapSource::User));
    }

    #[test]
    fn a_users_profile_applies_on_the_gpu_it_describes() {
        let mut mine = ModelProfile::parse(DEFAULT_PROFILE, DEFAULT_PROFILE_NAME).unwrap();
        mine.model_inputs.graph_node_gap_us = Some(0.111);
        let g = NodeGapChoice::Profile
            .resolve(
                "NVIDIA H200",
                Some(&(mine.clone(), "mine.json".to_string())),
            )
            .unwrap();
        assert_eq!(g.us, 0.111);
        assert!(g.source.to_string().contains("mine.json"), "{}", g.source);
        // A profile of another GPU says nothing of this one's, and the shipped one is not
        // taken in its place: the user asked for theirs.
        mine.device.as_mut().unwrap().name = "NVIDIA A100".into();
        assert_eq!(
            NodeGapChoice::Profile.resolve(
                "NVIDIA H200",
                Some(&(mine.clone(), "mine.json".to_string()))
            ),
            None
        );
        // Profiles written before the gap was measured hold none.
        mine.device.as_mut().unwrap().name = "NVIDIA H200".into();
        mine.model_inputs.graph_node_gap_us = None;
        assert_eq!(
            NodeGapChoice::Profile.resolve(
                "NVIDIA H200",
                Some(&(mine.clone(), "mine.json".to_string()))
            ),
            None
        );
    }

    #[test]
    fn the_profile_for_a_gpu_is_the_users_where_given_and_of_that_gpu() {
        let mut mine = ModelProfile::parse(DEFAULT_PROFILE, DEFAULT_PROFILE_NAME).unwrap();
        mine.model_inputs.graph_node_other_stream_us = Some(0.5);
        let user = (mine.clone(), "mine.json".to_string());
        let (p, origin) = profile_for("NVIDIA H200", Some(&user)).unwrap();
        assert_eq!((p, origin.as_str()), (mine.clone(), "mine.json"));
        let (shipped, origin) = profile_for("NVIDIA H200", None).unwrap();
        assert_ne!(shipped, mine);
        assert_eq!(origin, "the shipped profile");
        assert_eq!(profile_for("NVIDIA A100-SXM4-80GB", None), None);
        mine.device.as_mut().unwrap().name = "NVIDIA A100".into();
        assert_eq!(
            profile_for("NVIDIA H200", Some(&(mine, "mine.json".into()))),
            None
        );
    }
}

//! Figures by type, not by name: each kind of trial has an enum of its figures, and summaries
//! are indexed by that enum, so a misspelled figure does not compile (where a string lookup
//! would silently give NaN). In JSON the summaries are still a map from each figure's key.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::stats::Summary;

/// The figures of one kind of trial.
pub trait FigureSet: Copy + Eq + std::fmt::Debug + 'static {
    /// The trial the figures are read from.
    type Trial;
    /// Every figure, in report order.
    const ALL: &'static [Self];
    /// The figures the stopping rule waits for and the warnings watch.
    const HEADLINE: &'static [Self];
    /// The name in JSON, CSV and messages, e.g. `eager_wall_us`.
    fn key(self) -> &'static str;
    /// The figure's value in one trial.
    fn value(self, t: &Self::Trial) -> f64;
}

/// Declares a figure enum and its [`FigureSet`]: one row per figure, giving its variant, its
/// key and how a trial gives its value, so the three cannot drift apart.
///
/// ```ignore
/// figure_set! {
///     /// Docs of the enum.
///     MyFigure for MyTrial, headline [A] {
///         A => "a_us", |t| t.a;
///         Ratio => "ratio", |t| t.a / t.b;
///     }
/// }
/// ```
macro_rules! figure_set {
    (
        $(#[$meta:meta])*
        $name:ident for $trial:ty, headline [$($head:ident),* $(,)?] {
            $($variant:ident => $key:literal, |$t:ident| $value:expr;)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($variant,)+
        }

        impl $crate::figures::FigureSet for $name {
            type Trial = $trial;
            const ALL: &'static [$name] = &[$($name::$variant,)+];
            const HEADLINE: &'static [$name] = &[$($name::$head,)*];

            fn key(self) -> &'static str {
                match self {
                    $($name::$variant => $key,)+
                }
            }

            fn value(self, trial: &$trial) -> f64 {
                match self {
                    $($name::$variant => {
                        let $t = trial;
                        $value
                    })+
                }
            }
        }
    };
}
pub(crate) use figure_set;

/// One summary per figure of `F`, over the measured trials.
#[derive(Debug, Clone, PartialEq)]
pub struct Summaries<F: FigureSet> {
    by_figure: Vec<Summary>,
    _f: PhantomData<F>,
}

impl<F: FigureSet> Summaries<F> {
    /// Summarises every figure over `trials`.
    pub fn of(trials: &[F::Trial]) -> Self {
        Summaries {
            by_figure: F::ALL
                .iter()
                .map(|f| Summary::of(&values(*f, trials)))
                .collect(),
            _f: PhantomData,
        }
    }

    /// The summary of one figure.
    pub fn get(&self, f: F) -> &Summary {
        let i = F::ALL.iter().position(|x| *x == f).unwrap_or(0);
        &self.by_figure[i]
    }

    /// The median of one figure.
    pub fn median(&self, f: F) -> f64 {
        self.get(f).median
    }

    /// Every figure with its summary, in report order.
    pub fn iter(&self) -> impl Iterator<Item = (F, &Summary)> {
        F::ALL.iter().copied().zip(&self.by_figure)
    }
}

/// A figure's values over trials.
pub fn values<F: FigureSet>(f: F, trials: &[F::Trial]) -> Vec<f64> {
    trials.iter().map(|t| f.value(t)).collect()
}

/// Warnings (high spread, an outlying first trial) for the headline figures.
pub fn headline_warnings<F: FigureSet>(trials: &[F::Trial]) -> Vec<String> {
    F::HEADLINE
        .iter()
        .flat_map(|f| crate::stats::warnings(f.key(), &values(*f, trials)))
        .collect()
}

impl<F: FigureSet> Serialize for Summaries<F> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let map: BTreeMap<&str, &Summary> = self.iter().map(|(f, v)| (f.key(), v)).collect();
        map.serialize(s)
    }
}

impl<'de, F: FigureSet> Deserialize<'de> for Summaries<F> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut map = BTreeMap::<String, Summary>::deserialize(d)?;
        let by_figure = F::ALL
            .iter()
            .map(|f| {
                map.remove(f.key())
                    .ok_or_else(|| D::Error::custom(format!("summary has no `{}`", f.key())))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Summaries {
            by_figure,
            _f: PhantomData,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    figure_set! {
        Fig for (f64, f64), headline [A] {
            A => "a_us", |t| t.0;
            B => "b_ms", |t| t.1;
        }
    }

    #[test]
    fn summaries_are_indexed_by_figure_and_serialise_by_key() {
        let s = Summaries::<Fig>::of(&[(1.0, 10.0), (3.0, 30.0), (2.0, 20.0)]);
        assert_eq!(s.median(Fig::A), 2.0);
        assert_eq!(s.get(Fig::B).max, 30.0);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["a_us"]["median"], 2.0);
        let back: Summaries<Fig> = serde_json::from_value(json).unwrap();
        assert_eq!(back, s);
        let e = serde_json::from_str::<Summaries<Fig>>(
            r#"{"a_us": {"median":1,"min":1,"max":1,"mad":0,"n":1}}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("no `b_ms`"), "{e}");
    }

    #[test]
    fn warnings_watch_headline_figures_only() {
        // B is wild but not a headline figure; A is steady.
        let t = [(1.0, 1.0), (1.0, 100.0), (1.0, 3.0), (1.0, 50.0)];
        assert!(headline_warnings::<Fig>(&t).is_empty());
    }
}

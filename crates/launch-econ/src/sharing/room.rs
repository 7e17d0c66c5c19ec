//! Where a lane's kernel finds room for its blocks beside the kernels of other lanes
//! ([`super::NodeCost::footing`]): at once, in more rounds on the SMs they leave empty, or only
//! once their blocks begin to retire.

use super::{NodeCost, State, DONE_NS};
use crate::occupancy::Footing;

/// Which lanes' kernels wait for room, and in how many rounds of blocks each of the others
/// runs. A kernel whose block does not fit beside a kernel of another lane that fills every
/// SM, began before it and does not itself wait, waits until that kernel's blocks begin to
/// retire (see [`super::NodeCost::footing`]). Beside one whose blocks each take a whole SM and leave
/// some SMs empty ([`Footing::free_sms`]), a kernel whose blocks span more SMs than that runs
/// there in as many more rounds as it needs, or waits for the other's SMs where that ends
/// sooner — decided as it begins, so one that has run in rounds goes on in them: the block
/// scheduler starts what fits on the empty SMs, and the rest once the whole-SM blocks retire
/// (a kernel of such blocks itself does not wait: two decode GEMVs side by side overlap as the
/// profile's GEMM pair measured). Decided in the order the kernels began, so a kernel waits
/// only on one that holds its SMs.
pub(super) fn waiting_for_room(state: &[State]) -> (Vec<bool>, Vec<f64>) {
    let mut by_order: Vec<(usize, usize)> = state
        .iter()
        .enumerate()
        .filter_map(|(l, s)| match *s {
            State::Kernel { order, .. } => Some((order, l)),
            _ => None,
        })
        .collect();
    by_order.sort_unstable();
    let mut waiting = vec![false; state.len()];
    let mut rounds = vec![1.0f64; state.len()];
    for (i, &(_, l)) in by_order.iter().enumerate() {
        let State::Kernel {
            cost:
                NodeCost {
                    footing:
                        Footing {
                            needs: Some(need),
                            spans_sms,
                            one_an_sm,
                            ..
                        },
                    work_ns: own_work_ns,
                    ..
                },
            left_ns: own_left_ns,
            ..
        } = state[l]
        else {
            continue;
        };
        for &(_, m) in &by_order[..i] {
            let State::Kernel {
                cost:
                    NodeCost {
                        footing:
                            Footing {
                                leaves: Some(room),
                                free_sms,
                                ..
                            },
                        work_ns,
                        share,
                        ..
                    },
                left_ns,
                ..
            } = state[m]
            else {
                continue;
            };
            let holding_ns = holding_left_ns(left_ns, work_ns, share);
            if waiting[m] || room.holds(&need) || spans_sms <= free_sms || holding_ns <= DONE_NS {
                continue;
            }
            if free_sms == 0 {
                waiting[l] = true;
            } else if !one_an_sm {
                let confined = f64::from(spans_sms.div_ceil(free_sms));
                // Decided before the kernel runs: one that has begun in rounds keeps its
                // blocks there (they do not leave the SMs they run on) however soon the
                // other's blocks then retire.
                let begun = own_left_ns < own_work_ns;
                if !begun && (confined - 1.0) * own_left_ns > holding_ns {
                    waiting[l] = true;
                } else {
                    rounds[l] = rounds[l].max(confined);
                }
            }
        }
    }
    (waiting, rounds)
}

/// Work a kernel with `left_ns` of its `work_ns` left has still to do before its blocks begin
/// to retire and leave their SMs: its blocks hold them through `share` of its work (see
/// [`super::NodeCost::footing`]).
pub(super) fn holding_left_ns(left_ns: f64, work_ns: f64, share: f64) -> f64 {
    left_ns - (1.0 - share) * work_ns
}

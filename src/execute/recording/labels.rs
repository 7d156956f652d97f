//! Labels kept with a plan: every pass's name and every barrier command's label, built as C
//! strings at a plan's second recording (as its barriers are) into the plan's
//! [`PlanLabels`], then looked up frame after frame. A label that names a pass named
//! otherwise this frame is built as it goes, and the kept ones are built again next time.
//! Parallel recording builds its labels as it goes.

use super::instrument::{barrier_label, neighbour_passes, LabelText};
use crate::plan::{Command, Plan};
use crate::pools::PlanLabels;

/// Builds the label of every pass and barrier command of `plan` into `labels`, barrier
/// commands in recording order. `family`: a planner queue's family; `pass_name`: a pass's
/// name by its index.
pub(super) fn keep<'n>(
    labels: &mut PlanLabels,
    plan: &Plan,
    family: impl Fn(usize) -> u32,
    pass_name: impl Fn(usize) -> &'n str + Copy,
) {
    labels.rebuild(|labels| {
        for p in 0..plan.input.passes.len() {
            labels.push_pass(pass_name(p));
        }
        for (qi, qp) in plan.queues.iter().enumerate() {
            for batch in &qp.batches {
                for (c, command) in batch.commands.iter().enumerate() {
                    let Command::Barrier(b) = command else {
                        continue;
                    };
                    let mut text = LabelText::new();
                    let (next, prev) = neighbour_passes(batch, c);
                    let name = |p: Option<usize>| p.map(pass_name);
                    let color = barrier_label(&mut text, b, family(qi), name(next), name(prev));
                    // The label names the pass after the command, or else the one before.
                    labels.push_barrier(text.as_c_str(), color, next.or(prev));
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::super::instrument::neighbours;
    use super::*;
    use ash::vk;

    /// The labels kept with a plan are, command by command in recording order, the ones
    /// recording would build, on three queue families with ownership transfers both ways; and
    /// a pass named otherwise in a later frame gets its labels built again.
    #[test]
    fn kept_labels_are_the_labels_recording_builds() {
        use crate::plan::{plan, PassDecl, PlanInput, QueueDecl, ResourceDecl, UseDecl};
        use crate::Access;
        let q = vk::QueueFlags::TRANSFER;
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let pass = |name: &str, queue, uses: &[(usize, Access)]| {
            (uses.iter()).fold(PassDecl::new(name, queue), |p, &(r, a)| {
                p.with_use(UseDecl::new(r, a))
            })
        };
        let input = PlanInput {
            queues: (0..3)
                .map(|f| QueueDecl::new(&format!("q{f}"), f, q))
                .collect(),
            resources: (0..2)
                .map(|r| ResourceDecl::buffer(&format!("b{r}"), 64, usage))
                .collect(),
            passes: vec![
                pass("fill", 0, &[(0, Access::TRANSFER_WRITE)]),
                pass(
                    "copy",
                    1,
                    &[(0, Access::COPY_READ), (1, Access::COPY_WRITE)],
                ),
                pass(
                    "again",
                    1,
                    &[(1, Access::COPY_READ), (0, Access::COPY_WRITE)],
                ),
                pass(
                    "back",
                    0,
                    &[(0, Access::COPY_READ), (1, Access::COPY_WRITE)],
                ),
                pass("last", 2, &[(1, Access::COPY_READ)]),
            ],
        };
        let plan = plan(&input).unwrap();
        let names: Vec<String> = input.passes.iter().map(|p| p.name.clone()).collect();
        let family = |qi: usize| input.queues[qi].family;
        let mut labels = PlanLabels::default();
        keep(&mut labels, &plan, family, |p| names[p].as_str());
        let mut k = 0;
        let mut transfers = 0;
        for (qi, qp) in plan.queues.iter().enumerate() {
            for batch in &qp.batches {
                for (c, command) in batch.commands.iter().enumerate() {
                    match command {
                        Command::Barrier(b) => {
                            let (before, after) = neighbours(batch, c, |p| names[p].as_str());
                            let mut t = LabelText::new();
                            let color = barrier_label(&mut t, b, family(qi), before, after);
                            transfers += t.as_str().contains(" from family ") as usize;
                            let kept = labels.barrier(k, |p| names[p].as_str());
                            assert_eq!(kept, Some((t.as_c_str(), color)), "barrier command {k}");
                            k += 1;
                        }
                        Command::Pass(p) => {
                            let kept = labels.pass(*p, &names[*p]);
                            assert_eq!(kept.map(|c| c.to_str().unwrap()), Some(names[*p].as_str()));
                        }
                    }
                }
            }
        }
        assert!(
            k >= 4 && transfers >= 2,
            "{k} barrier commands, {transfers} acquires:\n{plan}"
        );
        assert_eq!(
            labels.barrier(k, |p| names[p].as_str()),
            None,
            "past the last"
        );
        // "copy" is named otherwise now: each barrier label that names it is built again, and
        // the others stay.
        let renamed = |p: usize| if p == 1 { "renamed" } else { names[p].as_str() };
        let kept_now = (0..k)
            .filter(|&k| labels.barrier(k, renamed).is_some())
            .count();
        let naming_copy = (0..k)
            .filter(|&k| {
                labels
                    .barrier(k, |p| names[p].as_str())
                    .unwrap()
                    .0
                    .to_str()
                    .unwrap()
                    .contains("`copy`")
            })
            .count();
        assert!(naming_copy >= 1);
        assert_eq!(kept_now, k - naming_copy);
    }
}

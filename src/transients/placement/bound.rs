//! The live-set lower bound: the heaviest set of transients no two of which are ordered.
//!
//! "Ordered" (every use of one happens-before every use of the other) is a strict partial
//! order once closed transitively, and transients that are pairwise unordered are all alive at
//! once somewhere in some execution the plan allows, so they need disjoint memory. The largest
//! total size over such sets (antichains) is therefore a lower bound on the memory of any
//! placement that keeps the plan's order. On one queue it is the classic "peak of live bytes".
//!
//! The maximum-weight antichain of a partial order is found exactly with a flow (the weighted
//! form of Dilworth's theorem): in the bipartite network `source → aᴸ` (capacity `w(a)`),
//! `aᴸ → bᴿ` for `a < b` (unbounded), `bᴿ → sink` (capacity `w(b)`), every unit of flow
//! chains two elements, so `total weight − maximum flow` is the fewest chains (counted with
//! multiplicity `w`) covering the order, which equals the heaviest antichain.

/// The transitive closure of `less` over `0..n`: `closure[a][b]` for `a < b`.
pub(super) fn closure(n: usize, less: impl Fn(usize, usize) -> bool) -> Vec<Vec<bool>> {
    let mut c: Vec<Vec<bool>> = (0..n)
        .map(|a| (0..n).map(|b| less(a, b)).collect())
        .collect();
    for k in 0..n {
        let through = c[k].clone();
        for row in &mut c {
            if row[k] {
                for (x, &t) in row.iter_mut().zip(&through) {
                    *x |= t;
                }
            }
        }
    }
    c
}

/// The largest total weight of pairwise unordered elements of the strict partial order
/// `less` (transitively closed, irreflexive).
pub(super) fn max_weight_antichain(weights: &[u64], less: &[Vec<bool>]) -> u64 {
    let n = weights.len();
    let (source, sink) = (2 * n, 2 * n + 1);
    let mut net = Network::new(2 * n + 2);
    for (a, &w) in weights.iter().enumerate() {
        net.edge(source, a, w);
        net.edge(n + a, sink, w);
        for (b, _) in less[a].iter().enumerate().filter(|(_, &l)| l) {
            net.edge(a, n + b, u64::MAX);
        }
    }
    weights.iter().sum::<u64>() - net.max_flow(source, sink)
}

/// A flow network for Dinic's algorithm: levels by breadth-first search, then blocking flows
/// along them.
struct Network {
    /// Per node: indices into `edges`.
    out: Vec<Vec<usize>>,
    /// (to, residual capacity); edge `e ^ 1` is the reverse of `e`.
    edges: Vec<(usize, u64)>,
}

impl Network {
    fn new(nodes: usize) -> Self {
        Network {
            out: vec![Vec::new(); nodes],
            edges: Vec::new(),
        }
    }

    fn edge(&mut self, from: usize, to: usize, capacity: u64) {
        self.out[from].push(self.edges.len());
        self.edges.push((to, capacity));
        self.out[to].push(self.edges.len());
        self.edges.push((from, 0));
    }

    fn levels(&self, source: usize) -> Vec<Option<usize>> {
        let mut level = vec![None; self.out.len()];
        level[source] = Some(0);
        let mut queue = std::collections::VecDeque::from([source]);
        while let Some(v) = queue.pop_front() {
            for &e in &self.out[v] {
                let (to, cap) = self.edges[e];
                if cap > 0 && level[to].is_none() {
                    level[to] = level[v].map(|l| l + 1);
                    queue.push_back(to);
                }
            }
        }
        level
    }

    /// Pushes up to `limit` from `v` towards `sink` along increasing levels.
    fn push(
        &mut self,
        v: usize,
        sink: usize,
        limit: u64,
        level: &[Option<usize>],
        next: &mut [usize],
    ) -> u64 {
        if v == sink {
            return limit;
        }
        while next[v] < self.out[v].len() {
            let e = self.out[v][next[v]];
            let (to, cap) = self.edges[e];
            if cap > 0 && level[to] == level[v].map(|l| l + 1) {
                let pushed = self.push(to, sink, limit.min(cap), level, next);
                if pushed > 0 {
                    self.edges[e].1 -= pushed;
                    self.edges[e ^ 1].1 = self.edges[e ^ 1].1.saturating_add(pushed);
                    return pushed;
                }
            }
            next[v] += 1;
        }
        0
    }

    fn max_flow(&mut self, source: usize, sink: usize) -> u64 {
        let mut flow = 0u64;
        loop {
            let level = self.levels(source);
            if level[sink].is_none() {
                return flow;
            }
            let mut next = vec![0; self.out.len()];
            loop {
                let pushed = self.push(source, sink, u64::MAX, &level, &mut next);
                if pushed == 0 {
                    break;
                }
                flow += pushed;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flow's answer is the heaviest antichain, found by trying every subset, on random
    /// partial orders of up to 9 elements.
    #[test]
    fn the_flow_finds_the_heaviest_antichain() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut nontrivial = 0;
        for _ in 0..500 {
            let n = 1 + next(9) as usize;
            let density = 1 + next(4);
            let weights: Vec<u64> = (0..n).map(|_| 1 + next(100)).collect();
            let edges: Vec<Vec<bool>> = (0..n)
                .map(|a| (0..n).map(|b| a < b && next(4) < density).collect())
                .collect();
            let less = closure(n, |a, b| edges[a][b]);
            let best = (0u32..1 << n)
                .filter(|set| {
                    (0..n).all(|a| {
                        (0..n).all(|b| set & (1 << a) == 0 || set & (1 << b) == 0 || !less[a][b])
                    })
                })
                .map(|set| {
                    (0..n)
                        .filter(|a| set & (1 << a) != 0)
                        .map(|a| weights[a])
                        .sum::<u64>()
                })
                .max()
                .unwrap();
            assert_eq!(
                max_weight_antichain(&weights, &less),
                best,
                "{weights:?} {less:?}"
            );
            let total: u64 = weights.iter().sum();
            let heaviest = *weights.iter().max().unwrap();
            nontrivial += (best != total && best != heaviest) as u32;
        }
        assert!(nontrivial > 100, "{nontrivial}");
    }

    #[test]
    fn a_chain_needs_its_heaviest_and_unordered_ones_need_all() {
        let chain = closure(3, |a, b| a < b);
        assert_eq!(max_weight_antichain(&[5, 9, 2], &chain), 9);
        let none = closure(3, |_, _| false);
        assert_eq!(max_weight_antichain(&[5, 9, 2], &none), 16);
        assert!(chain[0][2] && !chain[2][0]);
        assert_eq!(max_weight_antichain(&[], &[]), 0);
    }
}

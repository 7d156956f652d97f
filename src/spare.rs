//! Emptied vectors kept for reuse, so that a frame like the last one makes no heap
//! allocation: [`Spare`] for a vector whose elements borrow, kept without them between
//! frames, and [`KEPT`], how many of a kind a graph keeps.

/// How many emptied vectors of one kind are kept: one per execution in flight is enough for
/// a frame loop; more only holds memory.
pub(crate) const KEPT: usize = 8;

/// An emptied vector of `A` as an empty vector of `B`, keeping its allocation where the two
/// have the same size and alignment (the standard library collects in place then; otherwise
/// this allocates nothing either, and the old buffer is freed). For element types that
/// borrow: the lists are kept with `'static` and used with the borrow at hand.
pub(crate) fn recast<A, B>(mut v: Vec<A>) -> Vec<B> {
    v.clear();
    v.into_iter()
        .map(|_| -> B { unreachable!("empty") })
        .collect()
}

/// An emptied vector's allocation, kept for element types that are not `Send` (they borrow,
/// or hold locks): it is stored as a vector of `W` machine words per element, which is
/// `Send` and `Sync`, and never holds an element. [`recast`] moves the allocation between
/// the two element types, keeping it where size and alignment agree (see [`words`]).
pub(crate) struct Spare<const W: usize>(Vec<[usize; W]>);

/// How many machine words an element of `T` takes: the `W` of `T`'s [`Spare`]. The unit
/// test `spares_keep_their_allocations` checks that every kept type fills whole words with
/// the alignment of a word, so that no frame allocates.
pub(crate) const fn words<T>() -> usize {
    std::mem::size_of::<T>() / std::mem::size_of::<usize>()
}

/// Whether an element of `T` is `words` machine words with a word's alignment, so that a
/// [`Spare`] of that many words keeps its allocation.
const fn fits<T>(words: usize) -> bool {
    std::mem::size_of::<T>() == words * std::mem::size_of::<usize>()
        && std::mem::align_of::<T>() == std::mem::align_of::<usize>()
}

impl<const W: usize> Default for Spare<W> {
    fn default() -> Self {
        Spare(Vec::new())
    }
}

impl<const W: usize> Spare<W> {
    /// Keeps `v`'s allocation, dropping its elements. `A` must take `W` words, or this fails
    /// to compile (a spare of another size would allocate every frame).
    pub(crate) fn keep<A>(v: Vec<A>) -> Self {
        const {
            assert!(
                fits::<A>(W),
                "a Spare's element type takes another number of words"
            )
        };
        Spare(recast(v))
    }

    /// An empty vector with the kept allocation; `B` must take `W` words, as in
    /// [`Spare::keep`].
    pub(crate) fn take<B>(&mut self) -> Vec<B> {
        const {
            assert!(
                fits::<B>(W),
                "a Spare's element type takes another number of words"
            )
        };
        recast(std::mem::take(&mut self.0))
    }
}

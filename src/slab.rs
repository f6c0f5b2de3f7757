//! A table of values by small integer key, reusing freed keys: the Worker's entry parks each
//! request there while JavaScript reads its body (`edge::fetch`), and the callback that gets the
//! body takes it back by key.

/// Free-listed slots, so that keys stay small and the table never grows past the peak number
/// of values held at once.
#[derive(Debug)]
pub struct Slab<T>(Vec<Option<T>>);

impl<T> Slab<T> {
    /// An empty table (`const`, for a `thread_local!`).
    pub const fn new() -> Self {
        Slab(Vec::new())
    }

    /// Stores `value` in the first free slot and returns its key.
    pub fn insert(&mut self, value: T) -> u32 {
        let index = match self.0.iter().position(Option::is_none) {
            Some(free) => {
                self.0[free] = Some(value);
                free
            }
            None => {
                self.0.push(Some(value));
                self.0.len() - 1
            }
        };
        // More than 4 billion values held at once cannot happen in a 4 GiB wasm memory; were it
        // to, the key would name no slot and the value would never be taken, not a wrong one.
        u32::try_from(index).unwrap_or(u32::MAX)
    }

    /// Takes the value stored under `key` out of the table; `None` if there is none (a key
    /// taken twice, or never given).
    pub fn take(&mut self, key: u32) -> Option<T> {
        self.0.get_mut(usize::try_from(key).ok()?).and_then(Option::take)
    }
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_is_taken_once_by_its_key_and_freed_keys_are_reused() {
        let mut slab = Slab::new();
        let a = slab.insert("a");
        let b = slab.insert("b");
        assert_ne!(a, b);
        assert_eq!(slab.take(a), Some("a"));
        assert_eq!(slab.take(a), None, "taken once");
        assert_eq!(slab.take(99), None, "never given");
        let c = slab.insert("c");
        assert_eq!(c, a, "the freed slot is reused");
        assert_eq!(slab.take(b), Some("b"));
        assert_eq!(slab.take(c), Some("c"));
        assert!(slab.0.iter().all(Option::is_none), "all taken");
        assert_eq!(slab.0.len(), 2, "never grown past the peak held at once");
    }
}

//! The workspace's budget of tool calls. The MCP specification (2025-06-18, server/tools,
//! "Security Considerations") says servers MUST rate limit tool invocations; this is that limit,
//! per workspace, enforced in the workspace's Durable Object where the calls run
//! (`TOOL_RATE_LIMIT`, [`crate::config::Config::tool_rate_limit`]).
//!
//! The bucket lives in memory, in the object instance's [`super::Opened`], and is never written
//! to storage. That is acceptable because a workspace's calls are all routed to its one object
//! instance, which runs them one at a time, so the in-memory count sees every call while the
//! instance lives, at no storage cost per call. What it does not cover: when the instance is
//! evicted (idle, a deploy, a crash) the next instance starts with a full bucket, so a caller
//! could get at most one extra burst per restart; it counts per workspace, not per caller
//! address or connection; and it is a guard against runaway loops and abuse, not billing (the
//! plan limits in [`super::limits`] are stored and exact).

use std::cell::Cell;

use crate::config::Limit;

/// A token bucket of tool calls: `capacity` calls in a burst, refilled evenly over the window.
/// Starts full.
#[derive(Debug, Default)]
pub struct ToolBudget {
    /// Tokens left and when they were counted (ms); `None` while the bucket has never been used
    /// (full).
    state: Cell<Option<(f64, i64)>>,
}

/// A call the budget refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exhausted {
    /// Whole seconds until one call is available again (at least 1).
    pub retry_after_secs: u32,
}

impl ToolBudget {
    /// Spends one call at `now_ms`, or says how long until one is available. A refused call
    /// spends nothing, so backing off for the given time always succeeds.
    pub fn spend(&self, limit: Limit, now_ms: i64) -> Result<(), Exhausted> {
        let taken = limit.take(self.state.get(), now_ms);
        self.state.set(Some((taken.left, now_ms)));
        match taken.retry_after_secs {
            None => Ok(()),
            Some(retry_after_secs) => Err(Exhausted { retry_after_secs }),
        }
    }
}

impl Exhausted {
    /// The refusal the model sees: a tool result with `isError`, which it can act on by waiting.
    pub fn message(&self) -> String {
        let secs = self.retry_after_secs;
        let unit = if secs == 1 { "second" } else { "seconds" };
        format!(
            "Too many tool calls on this workspace in a short time. Nothing was done. Wait {secs} {unit} before calling again, and make fewer calls (for example, one call with several items instead of many calls)."
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_795_953_600_000;

    #[test]
    fn spends_a_burst_then_refuses_with_a_wait() {
        let budget = ToolBudget::default();
        let limit = Limit { capacity: 3, window_secs: 60 };
        for _ in 0..3 {
            assert_eq!(budget.spend(limit, T0), Ok(()));
        }
        // One token comes back every 20 s.
        assert_eq!(budget.spend(limit, T0), Err(Exhausted { retry_after_secs: 20 }));
        assert_eq!(budget.spend(limit, T0 + 5_000), Err(Exhausted { retry_after_secs: 15 }));
        assert_eq!(budget.spend(limit, T0 + 19_500), Err(Exhausted { retry_after_secs: 1 }));
    }

    #[test]
    fn refills_with_time_up_to_the_capacity() {
        let budget = ToolBudget::default();
        let limit = Limit { capacity: 2, window_secs: 10 };
        assert!(budget.spend(limit, T0).is_ok());
        assert!(budget.spend(limit, T0).is_ok());
        assert!(budget.spend(limit, T0).is_err());
        // A refused call spent nothing: after the announced wait, the call goes through.
        assert!(budget.spend(limit, T0 + 5_000).is_ok());
        assert!(budget.spend(limit, T0 + 5_000).is_err());
        // A long pause refills only up to the capacity.
        assert!(budget.spend(limit, T0 + 3_600_000).is_ok());
        assert!(budget.spend(limit, T0 + 3_600_000).is_ok());
        assert!(budget.spend(limit, T0 + 3_600_000).is_err());
        // A clock that goes backwards refills nothing.
        assert!(budget.spend(limit, T0).is_err());
    }

    #[test]
    fn the_refusal_says_how_long_to_wait() {
        assert!(Exhausted { retry_after_secs: 12 }.message().contains("Wait 12 seconds"));
        assert!(Exhausted { retry_after_secs: 1 }.message().contains("Wait 1 second "));
    }
}

"""The kernel: one Call in, one Outcome out (chain hashing, the store, the view, the simulator, tokens, prices, invariants)."""

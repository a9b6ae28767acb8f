"""Self-hosted serving: the GPUs (their datasheet figures and rental prices, as data), the open
models' sizes, a roofline of prefill and decode time, and the GPUs a request rate needs given the
prefix-cache hit rate. docs/serving.md; the rows' sources in docs/rules.md#self-hosted-serving."""

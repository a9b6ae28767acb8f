"""Traffic that counts the walks made over it, for tests that hold a replay to one pass over its
input (every pass over a transcript reads and calibrates its calls again)."""
from prefixsim.sources.traffic import Traffic


class Counting(Traffic):
    """`Counting.walks`: how many times any such traffic was iterated since the test set it to 0."""

    walks = 0

    def __iter__(self):
        Counting.walks += 1
        return super().__iter__()


def count_command_walks(monkeypatch, make=None) -> None:
    """`prefixsim replay` with the traffic it reads counted per walk (`make`: the test's own traffic
    instead, with the read one's skipped lines); Counting.walks starts at 0."""
    from prefixsim.commands import common
    from prefixsim.commands import replay as command

    real = common.read_traffic

    def counted(*a, **k):
        traffic, failed = real(*a, **k)
        out = Counting((make() if make else traffic).parts)
        out.skipped = traffic.skipped
        return out, failed

    monkeypatch.setattr(common, "read_traffic", counted)
    monkeypatch.setattr(command, "read_traffic", counted)
    Counting.walks = 0

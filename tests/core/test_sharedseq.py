"""Sequences sharing a prefix behave item for item as the tuple or list they stand for."""
from bisect import insort

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixsim.core.sharedseq import MIN_SHARED, PrefixList, PrefixTuple, common_prefix, share_list, share_tuple


def test_prefix_tuple_reads_as_its_tuple():
    base = tuple(range(10))
    t = PrefixTuple(base, 6, (60, 70))
    flat = (0, 1, 2, 3, 4, 5, 60, 70)
    assert len(t) == 8 and list(t) == list(flat) and list(reversed(t)) == list(reversed(flat))
    assert [t[i] for i in range(-8, 8)] == [flat[i] for i in range(-8, 8)]
    assert t[2:7] == flat[2:7] and t[::-1] == flat[::-1]
    assert t == flat and flat == t and hash(t) == hash(flat) and t != flat[:-1] and t != list(flat)
    assert t + (1,) == flat + (1,) and (1,) + t == (1,) + flat
    assert repr(t) == repr(flat)
    for bad in (8, -9):
        try:
            t[bad]
        except IndexError:
            pass
        else:
            raise AssertionError(bad)


def test_prefix_list_never_changes_its_base():
    base = list(range(10))
    a = PrefixList(base, 7)
    a.append(70)
    del a[5:]            # cuts into the base: only the length it uses shrinks
    a += [50, 51]
    a.insert(2, 99)      # inside the base: the items from there are taken into the tail
    assert a.flat() == [0, 1, 99, 2, 3, 4, 50, 51] and base == list(range(10))
    assert a == [0, 1, 99, 2, 3, 4, 50, 51] and a[:2] == [0, 1] and a[-1] == 51


def test_share_list_copies_a_plain_list_once_and_refers_to_it_after():
    src = list(range(200))
    a = share_list(src, 150)
    assert isinstance(a, PrefixList) and a.base is not src and list(a) == src[:150]
    src[:] = []          # the owner of a plain list may cut it: the shared copy is not affected
    a.append(-1)
    b = share_list(a, 150)
    assert isinstance(b, PrefixList) and b.base is a.base and list(b) == list(range(150))
    c = share_list(a, 151)   # past the base: a copy, as a plain list's slice would be
    assert list(c) == list(range(150)) + [-1]
    assert type(share_list(list(range(10)), MIN_SHARED - 1)) is list   # a short prefix is just copied


def test_share_tuple_refers_to_the_request_before_when_it_repeats_it():
    first = tuple(range(100))
    second = share_tuple([*range(99), -1], first)
    assert isinstance(second, PrefixTuple) and second.base is first and second == (*range(99), -1)
    third = share_tuple([*range(99), -2, -3], second)
    assert third.base is first and third.tail == (-2, -3)   # the base, not the tuple that refers to it
    # a tail longer than the part shared is kept whole: a long stream does not chain short bases
    assert type(share_tuple(list(range(70)) + list(range(1000, 1080)), first)) is tuple
    assert type(share_tuple(list(range(100)), None)) is tuple


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=40), st.integers(0, 40), st.lists(st.integers(0, 5), max_size=10),
       st.lists(st.tuples(st.sampled_from(["append", "cut", "insort", "extend"]), st.integers(0, 60)), max_size=12))
@pytest.mark.slow
def test_prefix_list_follows_a_plain_list(base, k, tail, ops):
    k = min(k, len(base))
    a, model = PrefixList(tuple(base), k, list(tail)), base[:k] + tail
    for op, x in ops:
        if op == "append":
            a.append(x)
            model.append(x)
        elif op == "cut":
            del a[x:]
            del model[x:]
        elif op == "extend":
            a += [x, x]
            model += [x, x]
        else:
            a.insert(x, -x)
            model.insert(x, -x)
        assert list(a) == model and len(a) == len(model) and list(reversed(a)) == model[::-1]
    assert list(a.base) == base   # never changed
    srt = sorted(model)
    s = PrefixList(tuple(srt), len(srt))
    insort(s, 3)
    insort(srt, 3)
    assert list(s) == srt


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=30), st.lists(st.integers(0, 3), max_size=30), st.integers(0, 30))
def test_common_prefix_is_the_first_difference(x, y, k):
    want = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
    assert common_prefix(tuple(x), tuple(y)) == want
    k = min(k, len(x))
    base = tuple(x)
    a, b = PrefixTuple(base, k, tuple(x[k:])), PrefixTuple(base, min(k, len(y)), tuple(y[min(k, len(y)):]))
    yy = list(b)
    want = next((i for i, (p, q) in enumerate(zip(x, yy)) if p != q), min(len(x), len(yy)))
    assert common_prefix(a, b) == want and common_prefix(a, tuple(yy)) == want
    assert common_prefix(a, b, 3) == min(want, 3)

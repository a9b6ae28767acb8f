"""The package face: the names a notebook needs resolve from `prefixsim` itself, lazily."""
import subprocess
import sys

import pytest

import prefixsim


@pytest.mark.parametrize("name", sorted(prefixsim.EXPORTS))
def test_every_exported_name_is_the_object_its_module_holds(name):
    import importlib

    assert getattr(prefixsim, name) is getattr(importlib.import_module(prefixsim.EXPORTS[name]), name)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        prefixsim.nope  # noqa: B018


def test_importing_the_package_loads_none_of_the_exports():
    code = "import sys, prefixsim; print(sorted(m for m in sys.modules if m.startswith('prefixsim')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['prefixsim']"

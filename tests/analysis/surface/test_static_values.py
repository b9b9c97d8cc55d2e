"""setup.py values spelled from named constants (static_values.py): read from the syntax tree, never run."""

from __future__ import annotations

import ast

import pytest

from analysis.models import SurfaceKind as K
from analysis.surface.packaging_texts import setup_py_keywords
from analysis.surface.requirements import packaging_changes
from analysis.surface.static_values import UNKNOWN, module_bindings, static_value

# The shape of a compiler project's setup.py: versions in constants, keywords in a dict spread into setup().
SETUP = """from setuptools import find_packages, setup

min_python_version = "3.9"
min_numpy_run_version = "1.22"
max_numpy_run_version = "2.1"
install_requires = [
    'numpy >={},<{}'.format(min_numpy_run_version, max_numpy_run_version),
    f'llvmlite >={min_python_version}',
]
metadata = dict(
    name='lib',
    classifiers=["Programming Language :: Python :: 3.9", "Programming Language :: Python :: 3.10"],
    packages=find_packages(include=["lib", "lib.*"]),
    install_requires=install_requires,
    python_requires=">={}".format(min_python_version),
)
metadata['license'] = "BSD"

setup(**metadata)
"""


def test_keywords_spread_from_a_dict_of_named_constants_are_read():
    found = setup_py_keywords(SETUP)
    assert found["python_requires"] == ">=3.9"
    assert found["install_requires"] == ["numpy >=1.22,<2.1", "llvmlite >=3.9"]
    assert found["packages"].include == ("lib", "lib.*")
    assert (found["name"], found["license"]) == ("lib", "BSD")


def test_a_raised_python_floor_in_a_constant_drops_support_and_a_numpy_floor_changes_the_dependency():
    after = SETUP.replace('min_python_version = "3.9"', 'min_python_version = "3.10"').replace(
        '"Programming Language :: Python :: 3.9", ', ""
    )
    [dropped] = [c for c in packaging_changes("setup.py", SETUP, after) if c.kind == K.SUPPORT_DROPPED]
    assert (dropped.name, dropped.old, dropped.new) == ("Python 3.9", ">=3.9", ">=3.10")
    raised = SETUP.replace('min_numpy_run_version = "1.22"', 'min_numpy_run_version = "1.24"')
    [numpy] = packaging_changes("setup.py", SETUP, raised)
    assert (numpy.kind, numpy.old, numpy.new) == (
        K.DEPENDENCY_CHANGED,
        "numpy<2.1,>=1.22",
        "numpy<2.1,>=1.24",
    )


@pytest.mark.parametrize(
    "expr",
    [
        "compute()",  # a call we cannot read
        "'{:>1000000000}'.format(v)",  # a format spec could ask for any width
        "'{0.__class__}'.format(v)",  # attribute access in a field
        "'{!r}'.format(v)",
        "f'{v!r}'",
        "'{}'.format(*xs)",
        "'{}{}'.format(v)",  # too few arguments
        "unbound",
    ],
)
def test_what_cannot_be_read_safely_is_unknown(expr):
    tree = ast.parse(f"v = 'x'\nxs = ['a']\nresult = {expr}\n")
    bound = module_bindings(tree)
    assert static_value(bound["result"], bound) is UNKNOWN


def test_names_bound_in_a_cycle_or_doubling_past_the_bound_are_unknown():
    cycle = ast.parse("a = b\nb = a\n")
    assert static_value(cycle.body[0].value, module_bindings(cycle)) is UNKNOWN
    doubling = "a0 = 'x' * 1\n" + "".join(f"a{i} = a{i - 1} + a{i - 1}\n" for i in range(1, 19))
    tree = ast.parse(doubling.replace("'x' * 1", "'xxxxxxxxxx'"))
    assert static_value(tree.body[-1].value, module_bindings(tree)) is UNKNOWN

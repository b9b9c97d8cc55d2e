"""Reading what a Meson build installs from its meson.build files, without running Meson."""

from __future__ import annotations

from analysis.surface.meson_build import meson_install


def test_variables_carry_across_subdirs_and_the_path_operator_joins() -> None:
    texts = {
        "meson.build": "srcs = ['a.c']\nsubdir('lib')\n",
        "lib/meson.build": (
            "srcs += 'lib' / 'b.c'\n"  # a string added to an array, a path joined: relative to lib/
            "py.extension_module('_x', srcs, include_directories: include_directories('inc', 'gen'))\n"
        ),
    }
    found = meson_install("", texts)
    assert found.read
    assert found.files == {"lib/a.c", "lib/lib/b.c"}
    assert found.header_folders == {"lib/inc", "lib/gen"}


def test_statements_it_cannot_read_are_skipped_and_the_rest_still_count() -> None:
    text = """\
# a comment with 'quotes' (and brackets
cfg = configuration_data({'A': 1, 'B': not true})
x = run_command('gen.sh', check: true).stdout().strip()
bad = @@@ this is not meson
foreach name : ['one', 'two']
  message(name)
endforeach
doc = '''multi
line 'quoted' text'''
lib = static_library('core', 'core.cpp', cpp_args: x == '' ? ['-O2'] : [])
install_headers('core.h', subdir: 'ncc')
py.install_sources(files('ncc/__init__.py'), subdir: 'ncc')
executable('tool', 'tool.cpp')
"""
    found = meson_install("", {"meson.build": text})
    assert found.files == {"core.cpp", "core.h", "ncc/__init__.py"}
    assert found.import_roots == {""}


def test_a_subdir_cycle_or_a_missing_file_ends_the_walk() -> None:
    texts = {"meson.build": "subdir('a')\nsubdir('missing')\n", "a/meson.build": "subdir('..')\n"}
    found = meson_install("", texts)
    assert found.read and not found.files
    assert not meson_install("sub/", texts).read

"""The pytest kind's guard lets trusted library code read a frame for a module name, and nobody else.

typing_extensions (on Python < 3.13) installs a `typing._check_generic` that calls sys._getframe, so an
honest solution's `List[int]` reaches it wherever a pytest plugin or the task's tests imported it.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from rsi.verifier import pytest_child


def _caller(filename: str) -> SimpleNamespace:
    return SimpleNamespace(f_code=SimpleNamespace(co_filename=filename, co_name="_caller"), f_back=None)


def _sensitive(trusted_root: str):
    trusted_file, _ = pytest_child._make_trust((trusted_root,))
    return pytest_child._make_sensitive(trusted_file, lambda path: False)


def test_trusted_typing_extensions_may_read_a_frame_but_a_planted_copy_may_not(tmp_path) -> None:
    typing_extensions = pytest.importorskip("typing_extensions")
    installed = os.path.realpath(typing_extensions.__file__)
    sensitive = _sensitive(os.path.dirname(installed))
    assert not sensitive("sys._getframe", (2,), _caller(installed))
    planted = tmp_path / "typing_extensions.py"
    planted.write_text("")
    assert sensitive("sys._getframe", (2,), _caller(str(planted)))
    assert sensitive("sys._getframe", (2,), _caller(str(tmp_path / "solution.py")))


def test_typing_extensions_outside_the_trusted_roots_is_not_a_frame_reader(tmp_path) -> None:
    typing_extensions = pytest.importorskip("typing_extensions")
    sensitive = _sensitive(str(tmp_path))  # the install is not under the only trusted root
    assert sensitive("sys._getframe", (2,), _caller(os.path.realpath(typing_extensions.__file__)))

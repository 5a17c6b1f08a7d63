"""The shape of the project, enforced: the referee (`referee`) never imports the lab
(`referee_lab`), each layer imports only the layers below it, and no module takes part in an
import circle. The graph is grimp's (import-linter's engine), built from the source, lazy
imports included."""

from __future__ import annotations

import copy
import subprocess
import sys
from dataclasses import dataclass
from functools import cache

import grimp
import pytest

from tests import ROOT


@dataclass(frozen=True)
class Rule:
    """Modules under `importer` may not import modules under any of `forbidden`."""

    importer: str
    forbidden: tuple[str, ...]
    why: str


RULES = (
    Rule("referee", ("referee_lab",), "the referee a player installs never needs the lab"),
    Rule("referee.rules", ("referee.vision", "referee.calibration", "referee.tracking", "referee.app",
                           "referee.hardware", "referee.cli", "numpy", "cv2"),
         "the rules are pure game logic"),
    Rule("referee.vision", ("referee.tracking", "referee.app", "referee.hardware", "referee.cli"),
         "vision works on arrays and knows no rule"),
    Rule("referee.calibration", ("referee.tracking", "referee.app", "referee.hardware", "referee.cli"),
         "calibration files and geometry know no game"),
    Rule("referee.tracking", ("referee.app", "referee.hardware", "referee.cli"),
         "tracking turns readings into moves, below the application"),
    Rule("referee.hardware", ("referee.vision", "referee.tracking", "referee.app", "referee.cli"),
         "hardware adapters only move frames and signals"),
    Rule("referee_lab.synth", ("referee.vision", "referee.calibration", "referee.tracking",
                               "referee.app", "referee.hardware"),
         "the renderer stays an independent truth for the readers it measures"),
)
ENTRY_POINTS = {"referee.cli": {"referee.__main__"}, "referee_lab.cli": set()}


@cache
def project_graph() -> grimp.ImportGraph:
    return grimp.build_graph("referee", "referee_lab", include_external_packages=True, cache_dir=None)


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def rule_breaches(graph: grimp.ImportGraph, rules: tuple[Rule, ...] = RULES) -> list[str]:
    breaches = []
    for rule in rules:
        for importer in sorted(m for m in graph.modules if _under(m, rule.importer)):
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                if any(_under(imported, f) for f in rule.forbidden):
                    breaches.append(f"{importer} imports {imported}: {rule.why}")
    return breaches


def entry_point_breaches(graph: grimp.ImportGraph) -> list[str]:
    return [f"{importer} imports {cli}: nothing imports a command line"
            for cli, allowed in ENTRY_POINTS.items()
            for importer in sorted(graph.find_modules_that_directly_import(cli) - allowed)]


def import_circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of project modules (Tarjan), each a circle of imports."""
    project = sorted(m for m in graph.modules if _under(m, "referee") or _under(m, "referee_lab"))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in low and imported in project:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while (top := stack.pop()) != module:
                group.append(top)
            if group:
                circles.append(sorted([module, *group]))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(project)))
    for module in project:
        if module not in index:
            visit(module)
    return circles


def test_every_layer_imports_only_what_it_may():
    assert rule_breaches(project_graph()) == []


def test_nothing_imports_a_command_line():
    assert entry_point_breaches(project_graph()) == []


def test_no_module_takes_part_in_an_import_circle():
    assert import_circles(project_graph()) == []


def test_the_checks_catch_a_forbidden_import_and_a_circle():
    graph = copy.deepcopy(project_graph())
    graph.add_import(importer="referee.vision.warp", imported="referee_lab.synth.scene")
    graph.add_import(importer="referee.rules.core", imported="referee.rules.zensu")
    breaches = rule_breaches(graph)
    assert any(b.startswith("referee.vision.warp imports referee_lab.synth.scene") for b in breaches)
    assert any("referee.rules.core" in circle for circle in import_circles(graph))


@pytest.mark.parametrize("argv", [["live", "--help"], ["check", "tests/data/records/rinne-sample.txt"]])
def test_players_commands_load_neither_torch_nor_the_lab(argv):
    probe = ("import sys, runpy; sys.argv = ['referee', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('referee', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'referee_lab'))\n"
             "print('LOADED', heavy)")
    result = subprocess.run([sys.executable, "-c", probe, *argv], cwd=ROOT, capture_output=True,
                            text=True, check=False)
    assert "LOADED []" in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]

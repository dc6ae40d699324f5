"""Installed packages that cannot agree: two claiming one name (an eval's, a provider's, a power
source's, an entry point's; a built-in's claimed by a third party too), or an entry point that is
broken (its module fails to import or raises, the object it names is missing, it registers
something invalid). Every command says so in one line naming the packages (distribution and
version) and the fix, and exits 2, with no traceback: pytest (a run, a collection of
tests_evals, --verify-published), `evaluate` in each of its modes, `build --check` and --write.

Each package is a module and a `*.dist-info` holding its entry points, put on the PYTHONPATH of
the command (what `importlib.metadata` reads), as tests/e2e/test_extensions.py installs the
example; so every command is a real exec, started as from a shell."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.board import evaluate_command
from tests.support.harness import harness_env, run_cli

TASK = """
from evals.tasks import Task, register_task

@register_task
class Claimed(Task):
    name, tag, key, prompt_version = {name!r}, {tag!r}, {tag!r}, "v1"
    on_board = False

    def load(self, source, split):
        return [], {{"name": "bundled"}}

    def prompt(self, sample):
        return ""

    def score(self, sample, completion, scoring):
        return {{}}
"""


def task(name: str, tag: str) -> str:
    return TASK.format(name=name, tag=tag)


PROVIDER = (
    "from evals.providers import ProviderInfo, "
    'register_provider\nregister_provider("twice", ProviderInfo(path="{module}:P"))\n'
)
RAPL = (
    "from evals.energy import PowerSourceInfo, register_source\nregister_source('rapl', "
    "PowerSourceInfo(make=lambda **options: None))\n"
)

# A package: (distribution, its entry points {name: value}, its modules {name: source}).
Package = tuple[str, dict[str, str], dict[str, str]]
EVAL_A: Package = ("a-eval", {"ax": "a_eval"}, {"a_eval": task("x", "xa")})
EVAL_B: Package = ("b-eval", {"bx": "b_eval"}, {"b_eval": task("x", "xb")})
BROKEN: Package = (
    "broken-eval",
    {"broken": "broken_eval"},
    {"broken_eval": "import a_module_that_is_not_installed\n"},
)

CLASH = (
    "two installed packages register the eval 'x': a-eval 0.1.0 "
    "(a_eval) and b-eval 0.1.0 (b_eval); uninstall one of them"
)
FAILED = (
    "the roblox_evals entry point 'broken' of broken-eval 0.1.0 (broken_eval) failed to load: "
    "ModuleNotFoundError: No module named 'a_module_that_is_not_installed'; fix or uninstall broken-eval"
)


def installed(tmp_path: Path, *packages: Package) -> dict[str, str]:
    """The environment of a command that sees `packages` installed (beside the harness)."""
    site = tmp_path / "site"
    for distribution, entry_points, modules in packages:
        info = site / f"{distribution.replace('-', '_')}-0.1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1.0\n"
        )
        (info / "entry_points.txt").write_text(
            "[roblox_evals]\n"
            + "".join(f"{name} = {value}\n" for name, value in entry_points.items())
        )
        for module, source in modules.items():
            (site / f"{module}.py").write_text(source)
    return harness_env(
        PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    )


def commands(data: Path) -> dict[str, tuple[str, list[str]]]:
    """Every command a user runs, with the prefix of its one-line messages."""
    folders = [f"--results-dir={data / 'results'}", f"--run-dir={data / 'runs'}"]
    pytest_ = [sys.executable, "-m", "pytest"]
    build = [
        sys.executable,
        "-m",
        "evals.site",
        f"--models={data / 'models.json'}",
        f"--results={data / 'results'}",
        f"--site={data.parent / 'site'}",
    ]
    return {
        "pytest --provider reference": (
            "ERROR: ",
            [*pytest_, "--provider=reference", "-m", "multiple_choice", *folders],
        ),
        "pytest tests_evals --collect-only": (
            "ERROR: ",
            [*pytest_, "tests_evals", "--collect-only", "-q", *folders],
        ),
        "pytest --verify-published": ("ERROR: ", [*pytest_, "--verify-published", *folders]),
        "evaluate NAME": (
            "error: ",
            evaluate_command(data, "M", "--provider=reference", "--model=m"),
        ),
        "evaluate NAME --dry-run": ("error: ", evaluate_command(data, "M", "--dry-run")),
        "evaluate NAME --status": ("error: ", evaluate_command(data, "M", "--status")),
        "evaluate --verify": ("error: ", evaluate_command(data, "--verify")),
        "evaluate --regrade": ("error: ", evaluate_command(data, "--regrade", "--dry-run")),
        "build --check": ("build: ", [*build, "--check"]),
        "build --write": ("build: ", [*build, "--write"]),
    }


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    (data / "results").mkdir(parents=True)
    (data / "models.json").write_text("[]\n")
    return data


def said(done) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]


@pytest.mark.parametrize("command", list(commands(Path("data"))))
@pytest.mark.parametrize(
    "packages, line", [((EVAL_A, EVAL_B), CLASH), ((BROKEN,), FAILED)], ids=["clash", "broken"]
)
def test_a_clash_or_a_broken_entry_point_is_one_line_from_every_command(
    tmp_path, command, packages, line
):
    data = _data(tmp_path)
    prefix, argv = commands(data)[command]

    done = run_cli(argv, env=installed(tmp_path, *packages), timeout=300)

    assert (done.returncode, said(done)) == (2, [prefix + line]), (
        done.stdout[-3000:] + done.stderr[-3000:]
    )
    assert (
        not (data / "runs").exists() and not (tmp_path / "site").joinpath("data.js").exists()
    )  # nothing started


KINDS: dict[str, tuple[tuple[Package, ...], str]] = {
    "a built-in eval's name": (
        (("ff-eval", {"ffx": "ff_eval"}, {"ff_eval": task("freeform", "fz")}),),
        "two installed packages register the eval 'freeform': roblox-evals {version} (built in: evals.tasks.freeform) "
        "and ff-eval 0.1.0 (ff_eval); uninstall ff-eval",
    ),
    "an eval's tag": (
        (EVAL_A, ("c-eval", {"cx": "c_eval"}, {"c_eval": task("y", "xa")})),
        "two installed packages register the eval tag 'xa' (evals 'x' "
        "and 'y'): a-eval 0.1.0 (a_eval) and c-eval 0.1.0 (c_eval); "
        "uninstall one of them",
    ),
    "a provider's name": (
        (
            ("p-one", {"p1": "p_one"}, {"p_one": PROVIDER.format(module="p_one")}),
            ("p-two", {"p2": "p_two"}, {"p_two": PROVIDER.format(module="p_two")}),
        ),
        "two installed packages register the provider 'twice': p-one "
        "0.1.0 (p_one) and p-two 0.1.0 (p_two); uninstall one of them",
    ),
    "a built-in power source's name": (
        (("my-rapl", {"my_rapl": "my_rapl"}, {"my_rapl": RAPL}),),
        "two installed packages register the power source 'rapl': roblox-evals {version} (built in: evals.energy.rapl) "
        "and my-rapl 0.1.0 (my_rapl); uninstall my-rapl",
    ),
    "an entry point's name": (
        (("my-openai", {"openai": "my_openai"}, {"my_openai": ""}),),
        "two installed packages declare the roblox_evals entry point "
        "'openai': roblox-evals {version} (evals.providers.openai) "
        "and my-openai 0.1.0 (my_openai); uninstall my-openai",
    ),
    "a module that raises": (
        (
            (
                "raising-eval",
                {"raising": "raising_eval"},
                {"raising_eval": "raise RuntimeError('no config\\nfound')\n"},
            ),
        ),
        "the roblox_evals entry point 'raising' of raising-eval 0.1.0 "
        "(raising_eval) failed to load: RuntimeError: no config found; "
        "fix or uninstall raising-eval",
    ),
    "a module that exits": (
        (
            (
                "exiting-eval",
                {"exiting": "exiting_eval"},
                {"exiting_eval": "import sys\nsys.exit(3)\n"},
            ),
        ),
        "the roblox_evals entry point 'exiting' of exiting-eval 0.1.0 (exiting_eval) failed to load: SystemExit: 3; "
        "fix or uninstall exiting-eval",
    ),
    "a missing object": (
        (("attr-eval", {"attr": "attr_eval:register"}, {"attr_eval": ""}),),
        "the roblox_evals entry point 'attr' of attr-eval 0.1.0 (attr_eval:register) failed to load: "
        "AttributeError: module 'attr_eval' has no attribute 'register'; fix or uninstall attr-eval",
    ),
    "an invalid provider": (
        (
            (
                "bad-provider",
                {"bad": "bad_provider"},
                {
                    "bad_provider": "from evals.providers import register_provider\n"
                    "register_provider('bad', {'path': 'bad_provider:P'})\n"
                },
            ),
        ),
        "the roblox_evals entry point 'bad' of bad-provider 0.1.0 (bad_provider) registers something invalid: "
        "bad_provider registers the provider 'bad' with a dict, not a ProviderInfo; fix or uninstall bad-provider",
    ),
    "an invalid eval": (
        (("bad-eval", {"bad": "bad_eval"}, {"bad_eval": task("", "bz")}),),
        "the roblox_evals entry point 'bad' of bad-eval 0.1.0 (bad_eval) registers something invalid: "
        "the eval Claimed (bad_eval) has '' for its name, not a word; fix or uninstall bad-eval",
    ),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_of_clash_and_of_broken_entry_point_is_one_line_naming_the_packages(
    tmp_path, kind
):
    """Each kind with two commands, pytest and one of the others in turn."""
    from importlib.metadata import version

    packages, line = KINDS[kind]
    line = line.format(version=version("roblox-evals"))
    data = _data(tmp_path)
    others = [name for name in commands(data) if not name.startswith("pytest")]
    env = installed(tmp_path, *packages)
    for command in ("pytest --provider reference", others[list(KINDS).index(kind) % len(others)]):
        prefix, argv = commands(data)[command]
        done = run_cli(argv, env=env, timeout=300)
        assert (done.returncode, said(done)) == (2, [prefix + line]), (
            command,
            done.stdout[-3000:] + done.stderr[-3000:],
        )
